import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../harness/transcripts.js';
import { waitFor } from '../../../harness/wait-for.js';
import { compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createWorkerFleet, type WorkerFleet } from '../../helpers/worker-fleet.js';

let fleet: WorkerFleet;
let sim: WorkerFleet['sim'];
let stack: WorkerFleet['stack'];
const startWorker = () => fleet.startWorker();

beforeAll(async () => {
  fleet = await createWorkerFleet({ keepBodies: 1000 });
  ({ sim, stack } = fleet);
});
afterAll(async () => {
  await fleet?.close();
});

const session = () => loadRealTranscript('spotter-claude-code/258c7280-ae70-4798-800f-63464d01a85d.jsonl').conversations[0]!.messages;

async function jobStatus(id: string): Promise<string> {
  const rows = await stack.db.db.execute<{ status: string }>(sql`select status from compaction_jobs where id = ${id}`);
  return rows[0]?.status ?? 'missing';
}

async function savedSteps(id: string): Promise<number> {
  const rows = await stack.db.db.execute<{ n: number }>(
    sql`select count(*)::int as n from compaction_chunks where job_id = ${id} and status = 'done'`,
  );
  return rows[0]?.n ?? 0;
}

/**
 * Successful calls that had finished before the kill and whose request was sent again after
 * it. A call whose answer arrived in the last `graceMs` before the kill may not have been
 * persisted yet: it counts as in flight (the one call allowed to repeat).
 */
function repeatedAfter(t: number, graceMs = 300): number {
  const calls = sim.control.callLog().filter((c) => c.outcome === 'ok');
  const before = new Set(calls.filter((c) => (c.endMs ?? Infinity) < t - graceMs).map((c) => JSON.stringify(c.body)));
  return calls.filter((c) => c.startMs > t && before.has(JSON.stringify(c.body))).length;
}

async function expectEachMessageOnce(conversationId: string, expected: number) {
  const rows = await stack.db.db.execute<{ seqs: number; dupes: number }>(sql`
    select count(distinct seq)::int as seqs, (count(*) - count(distinct seq))::int as dupes from (
      select m.seq from messages m join conversations c on c.id = m.conversation_id where c.external_id = ${conversationId} and m.kind = 'message'
      union all
      select a.seq from archived_messages a join conversations c on c.id = a.conversation_id
       where c.external_id = ${conversationId} and a.reason = 'summarized' and a.kind = 'message'
    ) s`);
  expect(rows[0]).toEqual({ seqs: expected, dupes: 0 });
}

describe('a worker killed with SIGKILL', () => {
  it('mid-summarize: another worker resumes the job, finished chunks are not paid twice', async () => {
    sim.control.reset();
    sim.control.setProfile('fixed:2500');
    const messages = session();
    await seedConversation(stack, 'crash-summarize', messages, { policy: { auto: false, summaryMaxTokens: 4000 } });
    const first = startWorker();
    const job = await compact(stack, 'crash-summarize', { strategy: 'summarize' });
    // kill once some chunks are memoized and others are still in flight
    await waitFor(async () => (await savedSteps(job.id)) >= 1 && sim.control.inFlight() > 0, 60_000, 20);
    const killedAt = Date.now();
    first.kill('SIGKILL');
    await first.exited;
    startWorker();
    const done = await waitForJob(stack, job.id, 90_000);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(repeatedAfter(killedAt)).toBe(0);
    const resumedAfterMs =
      Math.min(
        ...sim.control
          .callLog()
          .filter((c) => c.startMs > killedAt)
          .map((c) => c.startMs),
      ) - killedAt;
    expect(resumedAfterMs).toBeLessThan(20_000);
    await expectEachMessageOnce('crash-summarize', messages.length);
  });

  it('mid-finalize (during the re-summary): the job completes once, nothing duplicated', async () => {
    sim.control.reset();
    sim.control.setProfile('instant');
    const messages = session();
    // many small chunks force a re-summary in finalize
    await seedConversation(stack, 'crash-finalize', messages, {
      policy: { auto: false, chunkTokens: 4000, summaryMaxTokens: 1500, maxLiveBatches: 3 },
    });
    const first = startWorker();
    const job = await compact(stack, 'crash-finalize', { strategy: 'summarize' });
    await waitFor(async () => (await jobStatus(job.id)) === 'resummarizing' || (await jobStatus(job.id)) === 'completed', 60_000, 10);
    sim.control.setProfile('fixed:4000');
    await waitFor(async () => sim.control.inFlight() > 0 || (await jobStatus(job.id)) === 'completed', 30_000, 10);
    const killedAt = Date.now();
    first.kill('SIGKILL');
    await first.exited;
    startWorker();
    const done = await waitForJob(stack, job.id, 90_000);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(repeatedAfter(killedAt)).toBe(0);
    await expectEachMessageOnce('crash-finalize', messages.length);
    const clips = await stack.db.db.execute<{ n: number }>(sql`
      select count(*)::int as n from messages m join conversations c on c.id = m.conversation_id
       where c.external_id = 'crash-finalize' and m.kind = 'clip_archive'`);
    expect(clips[0]?.n).toBe(1);
  });
});
