import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../harness/transcripts.js';
import { waitFor } from '../../../harness/wait-for.js';
import { createDb, type DbHandle, type Tx } from '../../../src/db/client.js';
import { withConversationLock } from '../../../src/db/locks.js';
import { listChunks } from '../../../src/db/repos/chunks.js';
import { indexArchiveForRecall } from '../../../src/db/repos/recall-index.js';
import type { WorkerDeps } from '../../../src/worker/deps.js';
import { processFinalize } from '../../../src/worker/processors/finalize.js';
import { processPlan } from '../../../src/worker/processors/plan.js';
import { processSummarizeChunk } from '../../../src/worker/processors/summarize.js';
import { compact, seedConversation } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';
import { workerStepDeps } from '../../helpers/worker-steps.js';

/**
 * A revert (or an erase) racing the recall indexer that runs after a compaction's commit
 * (SPEC §5.8, §5.9), each interleaving driven step by step: the compaction's steps are called
 * in-process, and other sessions hold a row or a lock to park one side exactly where the
 * interleaving needs it.
 *
 * The deadlock: an indexer pass's foreign-key checks lock the archived rows it indexes in the
 * order of its plan — over a populated archive, a lookup by primary key per row, in seq order
 * (this file's archive is a dozen rows, so the indexer's session turns hash and merge joins
 * off to get that plan) — while the revert's delete meets the job's archived rows in heap order
 * (the job index keeps equal keys in heap order), and the commit's insert…select gives no order:
 * after a revert restored messages to new heap positions, the next compaction's archive can lie
 * in any order. Here it is laid out highest seq first. The indexer's session has a long
 * deadlock_timeout (a superuser setting: the test services' role is postgres), so when the two
 * deadlock Postgres always rolls the revert back — the 500 INTERNAL a CI run once got from
 * POST /v1/jobs/:id/revert.
 */

const INDEXER = 'revert-race-indexer';
const HOLDER = 'revert-race-holder';
const OTHER = 'revert-race-other';

let stack: Stack;
let deps: WorkerDeps;
let indexer: DbHandle;
let holder: DbHandle;
let other: DbHandle;
beforeAll(async () => {
  stack = await createStack({ workers: false });
  deps = workerStepDeps(stack);
  indexer = createDb(stack.db.url, { max: 1, name: INDEXER });
  await indexer.sql`set deadlock_timeout = '60s'`;
  await indexer.sql`set enable_hashjoin = off`;
  await indexer.sql`set enable_mergejoin = off`;
  holder = createDb(stack.db.url, { max: 1, name: HOLDER });
  other = createDb(stack.db.url, { max: 1, name: OTHER });
}, 60_000);
afterAll(async () => {
  await Promise.all([indexer?.close(), holder?.close(), other?.close()]);
  await stack?.close();
});

const policy = { auto: false, keepRecent: 2, chunkTokens: 2_000, summaryMaxTokens: 1_000, maxLiveBatches: 2 };
const revert = (jobId: string) => stack.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/revert`, headers: stack.auth() });
const erase = (externalId: string) => stack.app.inject({ method: 'DELETE', url: `/v1/conversations/${externalId}`, headers: stack.auth() });

/**
 * A completed summarize compaction whose archive the indexer has not reached yet: the steps run
 * as the worker runs them, then the index the finalize wrote after its commit is taken away
 * again (the state between the commit and the indexer's first pass).
 */
async function committedNotIndexed(externalId: string): Promise<{ jobId: string; conversationId: string }> {
  const messages = loadRealTranscript('spotter-claude-code/tool_heavy.jsonl').conversations[0]!.messages;
  await seedConversation(stack, externalId, messages, { policy });
  const job = await compact(stack, externalId, { strategy: 'summarize' });
  await processPlan({ jobId: job.id }, deps);
  const chunks = await listChunks(deps.db, job.id);
  await Promise.all(chunks.map((_, chunkIndex) => processSummarizeChunk({ jobId: job.id, chunkIndex }, deps)));
  await processFinalize({ jobId: job.id }, deps);
  const [row] = await deps.db.execute<{ conversation_id: string; status: string }>(
    sql`select conversation_id, status from compaction_jobs where id = ${job.id}`,
  );
  expect(row?.status).toBe('completed');
  const conversationId = row!.conversation_id;
  await deps.db.execute(sql`delete from archived_recall_indexed where conversation_id = ${conversationId}`);
  await deps.db.execute(sql`delete from archived_recall_pieces where conversation_id = ${conversationId}`);
  await deps.db.execute(sql`delete from archived_search_pieces where conversation_id = ${conversationId}`);
  return { jobId: job.id, conversationId };
}

/** The job's archived originals, lowest seq first: the order the indexer's checks lock them in. */
async function archivedOriginals(jobId: string): Promise<string[]> {
  const rows = await deps.db.execute<{ archive_id: string }>(sql`
    select archive_id from archived_messages where job_id = ${jobId} and reason <> 'superseded_clip' and kind = 'message' order by seq, archive_id`);
  return rows.map((r) => r.archive_id);
}

/** Rewrites the job's archived rows, unchanged, so that the heap holds them highest seq first. */
async function layOutHighestSeqFirst(jobId: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await tx.execute(sql`create temporary table moved on commit drop as select * from archived_messages where job_id = ${jobId}`);
    await tx.execute(sql`delete from archived_messages where job_id = ${jobId}`);
    await tx.execute(sql`insert into archived_messages select * from moved order by seq desc`);
  });
  const [order] = await deps.db.execute<{ descending: boolean }>(sql`
    select array_agg(seq order by ctid) = array_agg(seq order by seq desc) as descending from archived_messages where job_id = ${jobId}`);
  expect(order?.descending).toBe(true);
}

/** Sessions of this database waiting on a heavyweight lock (a row, a transaction, an advisory lock). */
async function waiting(): Promise<Array<{ application_name: string; query: string }>> {
  return deps.db.execute<{ application_name: string; query: string }>(sql`
    select application_name, query from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`);
}

const until = (what: string, predicate: (sessions: Array<{ application_name: string; query: string }>) => boolean) =>
  waitFor(async () => predicate(await waiting()), 10_000, 25, what);

/**
 * Runs `hold` in a transaction of `handle`'s one session and keeps that transaction open until
 * `release()`; `held` resolves once `hold` is done (whatever it locked is then held).
 */
function holdOpen(handle: DbHandle, hold: (tx: Tx) => Promise<void>): { held: Promise<void>; release(): void; done: Promise<void> } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let ready!: () => void;
  const held = new Promise<void>((resolve) => (ready = resolve));
  const done = handle.db.transaction(async (tx) => {
    await hold(tx);
    ready();
    await released;
  });
  return { held: Promise.race([held, done]), release, done };
}

describe('a recall indexer pass that holds the archive when a revert comes', () => {
  it('finishes first; then the revert answers 200 and takes what the pass wrote with it', async () => {
    const { jobId, conversationId } = await committedNotIndexed('race-pass');
    await layOutHighestSeqFirst(jobId);
    const [lowest] = await archivedOriginals(jobId);

    // the pass stops at the first row its checks lock (the lowest seq), held by another session
    const hold = holdOpen(holder, async (tx) => {
      await tx.execute(sql`select 1 from archived_messages where archive_id = ${lowest!} for update`);
    });
    await hold.held;
    const pass = indexArchiveForRecall(indexer.db, conversationId, { limit: 200 });
    await until('the indexer parked on the held row', (s) => s.some((x) => x.application_name === INDEXER));
    // today's revert deletes every other row of the job (heap order), then waits for the lowest
    // behind the indexer, which then waits for the second lowest: a cycle
    const reverting = revert(jobId);
    await until('the revert waiting', (s) => s.some((x) => x.application_name !== INDEXER));
    hold.release();
    await hold.done;

    const [reverted, indexed] = await Promise.allSettled([reverting, pass]);
    expect(reverted.status).toBe('fulfilled');
    const res = (reverted as PromiseFulfilledResult<Awaited<typeof reverting>>).value;
    expect(res.statusCode, res.body).toBe(200);
    expect(indexed.status, String((indexed as PromiseRejectedResult).reason)).toBe('fulfilled');

    const [left] = await deps.db.execute<{ archived: number; indexed: number; pieces: number }>(sql`
      select (select count(*)::int from archived_messages where job_id = ${jobId}) as archived,
             (select count(*)::int from archived_recall_indexed where conversation_id = ${conversationId}) as indexed,
             (select count(*)::int from archived_recall_pieces where conversation_id = ${conversationId}) as pieces`);
    expect(left).toEqual({ archived: 0, indexed: 0, pieces: 0 });
    expect(await indexArchiveForRecall(deps.db, conversationId, { limit: 200 })).toEqual({
      messages: 0,
      pieces: 0,
      more: false,
      next: null,
    });
  });
});

describe('a recall indexer pass that starts while the archive is being deleted', () => {
  // Each remover is parked after its archive delete by the job row another session holds: the
  // revert's last write updates it, the erase's cascade reaches it after the archived rows.
  const removers = [
    { what: 'a revert', remove: (ids: { jobId: string; externalId: string }) => revert(ids.jobId), status: 200 },
    { what: 'an erase of the conversation', remove: (ids: { jobId: string; externalId: string }) => erase(ids.externalId), status: 204 },
  ];

  it.each(removers)(
    'waits for $what to commit and finds nothing to index (it never fails on the rows removed)',
    async ({ what, remove, status }) => {
      const externalId = `race-removed-${status}`;
      const { jobId, conversationId } = await committedNotIndexed(externalId);
      const hold = holdOpen(holder, async (tx) => {
        await tx.execute(sql`select 1 from compaction_jobs where id = ${jobId} for no key update`);
      });
      await hold.held;
      const removing = remove({ jobId, externalId });
      await until(`${what} parked on the job row`, (s) => s.length > 0);

      const pass = indexArchiveForRecall(indexer.db, conversationId, { limit: 200 });
      await until('the indexer waiting', (s) => s.some((x) => x.application_name === INDEXER));
      hold.release();
      await hold.done;

      const res = await removing;
      expect(res.statusCode, res.body).toBe(status);
      await expect(pass).resolves.toEqual({ messages: 0, pieces: 0, more: false, next: null });
      const [left] = await deps.db.execute<{ archived: number; indexed: number }>(sql`
      select (select count(*)::int from archived_messages where conversation_id = ${conversationId} and job_id = ${jobId}) as archived,
             (select count(*)::int from archived_recall_indexed where conversation_id = ${conversationId}) as indexed`);
      expect(left).toEqual({ archived: 0, indexed: 0 });
    },
  );
});

describe('a revert Postgres rolls back for another transaction', () => {
  it('answers 409 REVERT_CONFLICT problem+json, changes nothing, and succeeds when repeated', async () => {
    const { jobId, conversationId } = await committedNotIndexed('race-victim');
    const archivedBefore = (await archivedOriginals(jobId)).length;
    // a deadlock the revert closes last: it waits on the conversation row held by a session
    // that already waits on the revert's conversation lock (and checks for deadlocks only
    // after a minute, so the revert is the one rolled back)
    const jobRow = holdOpen(holder, async (tx) => {
      await tx.execute(sql`select 1 from compaction_jobs where id = ${jobId} for no key update`);
    });
    await jobRow.held;
    const reverting = revert(jobId);
    await until('the revert parked on the job row', (s) => s.some((x) => x.query.includes('update compaction_jobs')));
    const cycle = holdOpen(other, async (tx) => {
      await tx.execute(sql`set local deadlock_timeout = '60s'`);
      await tx.execute(sql`select 1 from conversations where id = ${conversationId} for no key update`);
      await withConversationLock(tx, conversationId);
    });
    await until('the other session waiting on the conversation lock', (s) => s.some((x) => x.application_name === OTHER));
    jobRow.release();
    await jobRow.done;

    const res = await reverting;
    expect(res.statusCode, res.body).toBe(409);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ status: 409, code: 'REVERT_CONFLICT' });
    cycle.release();
    await cycle.done;

    const [job] = await deps.db.execute<{ reverted: boolean }>(
      sql`select result ? 'revertedAt' as reverted from compaction_jobs where id = ${jobId}`,
    );
    expect(job?.reverted).toBe(false);
    expect(await archivedOriginals(jobId)).toHaveLength(archivedBefore);
    const again = await revert(jobId);
    expect(again.statusCode, again.body).toBe(200);
  });
});
