import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { prepareAppend, storeAppend } from '../../../src/api/append-messages.js';
import type { NormalizedMessage } from '../../../src/compaction/types.js';
import { createDb, type DbHandle } from '../../../src/db/client.js';
import { listChunks } from '../../../src/db/repos/chunks.js';
import { getJob } from '../../../src/db/repos/jobs.js';
import { conversations } from '../../../src/db/schema.js';
import type { WorkerDeps } from '../../../src/worker/deps.js';
import { processFinalize } from '../../../src/worker/processors/finalize.js';
import { processPlan } from '../../../src/worker/processors/plan.js';
import { processSummarizeChunk } from '../../../src/worker/processors/summarize.js';
import { compact, seedConversation } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';
import { workerStepDeps } from '../../helpers/worker-steps.js';

/**
 * Statements each step sends to Postgres, counted at the driver (postgres.js `debug`): a
 * bounded number, and the same whatever the conversation's size. A query per message on
 * the hot path would show here as a count that grows with the history.
 */

let sim: TestLlmSim;
let stack: Stack;
let counted: DbHandle;
let deps: WorkerDeps;
let statements = 0;
/** statements of the recall indexing that follows a commit (bounded passes, as many as the archive needs) */
let recallStatements = 0;

/**
 * A recall indexing pass runs in a transaction of its own under the archive's shared lock
 * (BEGIN, the lock, its reads and writes, COMMIT): its BEGIN is told by the lock that follows
 * it, its COMMIT by the lock before it. The steps run one at a time, so statements come in order.
 */
let heldBegin = false;
let inRecallPass = false;
/** every statement's text while a test collects them */
let captured: string[] | null = null;
function classify(query: string): void {
  captured?.push(query);
  if (heldBegin) {
    heldBegin = false;
    if (/pg_advisory_xact_lock_shared/.test(query)) {
      inRecallPass = true;
      recallStatements += 2;
      return;
    }
    statements += 1;
  }
  if (/^\s*begin\b/i.test(query)) heldBegin = true;
  else if (inRecallPass && /^\s*commit\b/i.test(query)) {
    inRecallPass = false;
    recallStatements += 1;
  } else if (inRecallPass || /archived_recall/.test(query)) recallStatements += 1;
  else statements += 1;
}

beforeAll(async () => {
  sim = await startTestLlmSim();
  stack = await createStack({ workers: false, env: { ANTHROPIC_BASE_URL: sim.url, COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5' } });
  counted = createDb(stack.db.url, { max: 4, name: 'compactd-round-trips', onQuery: classify });
  deps = { ...workerStepDeps(stack), db: counted.db };
  // open every connection first: a new one spends statements of its own (postgres.js reads the array types)
  await Promise.all(Array.from({ length: 4 }, () => counted.sql`select pg_sleep(0.1)`));
});
afterAll(async () => {
  await counted?.close();
  await stack?.close();
  await sim?.close();
});
beforeEach(() => {
  sim.control.reset();
  sim.control.setProfile('instant');
});

async function count(run: () => Promise<unknown>): Promise<number> {
  statements = 0;
  recallStatements = 0;
  await run();
  return statements;
}

/** A coding-agent-like history: user asks, assistant calls a tool, the result comes back, the assistant answers. */
function history(turns: number, tag: string): NormalizedMessage[] {
  const words = (n: number, seed: number) => Array.from({ length: n }, (_, i) => `word${(seed * 31 + i) % 97}`).join(' ');
  return Array.from({ length: turns }, (_, t): NormalizedMessage[] => [
    { role: 'user', content: [{ type: 'text', text: `Please check file src/mod${t}.ts? ${words(30, t)}` }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: `${tag}_${t}`, name: 'read_file', input: { path: `src/mod${t}.ts` } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: `${tag}_${t}`, content: `error: ${words(120, t + 1)}` }] },
    { role: 'assistant', content: [{ type: 'text', text: `Done with turn ${t}. ${words(40, t + 2)}` }] },
  ]).flat();
}

// maxLiveBatches above the chunk count and a clip-archive budget out of reach: no consolidation is recorded
// (one statement more when it is)
const POLICY = {
  auto: false,
  chunkTokens: 1500,
  summaryMaxTokens: 400,
  keepRecent: 6,
  maxLiveBatches: 100,
  clipArchiveMaxTokens: 1_000_000,
};

async function compactionSteps(id: string, turns: number) {
  await seedConversation(stack, id, history(turns, id), { policy: POLICY });
  const job = await compact(stack, id, { strategy: 'summarize' });
  const plan = await count(() => processPlan({ jobId: job.id }, deps));
  const chunks = await listChunks(counted.db, job.id);
  const summarize: number[] = [];
  for (const chunk of chunks) summarize.push(await count(() => processSummarizeChunk({ jobId: job.id, chunkIndex: chunk.idx }, deps)));
  const finalize = await count(() => processFinalize({ jobId: job.id }, deps));
  const recallIndexing = recallStatements;
  expect((await getJob(counted.db, job.id))?.status).toBe('completed');
  return { plan, summarize, finalize, recallIndexing, chunks: chunks.length };
}

describe('statements per step', () => {
  it('plan, summarize and finalize each send a bounded number, the same for 60 and 600 messages', async () => {
    const small = await compactionSteps('rt-small', 15);
    const large = await compactionSteps('rt-large', 150);
    expect(large.chunks).toBeGreaterThan(small.chunks);
    expect(large.plan).toBe(small.plan);
    expect(large.finalize).toBe(small.finalize);
    expect(new Set([...small.summarize, ...large.summarize])).toEqual(new Set([small.summarize[0]]));
    // job + conversation + policy, start, metadata, live batches, latest request, BEGIN, plan + chunk rows, COMMIT
    expect(large.plan).toBeLessThanOrEqual(9);
    // the chunk with its job, its messages, its result
    expect(large.summarize[0]).toBeLessThanOrEqual(3);
    // job + conversation + policy, the chunks, then the commit: BEGIN, lock, status, totals + planned seqs still
    // active, live batches, batch rows, the archive move, archive count, clip-archive, counters + totals, the active
    // messages holding what the clip-archive lacks (retention and what the context no longer holds, one lookup),
    // the forgotten names' record, status, webhook event (conversation id, delivery), COMMIT
    expect(large.finalize).toBeLessThanOrEqual(19);
    // after the commit, the recall index is written in passes of up to 200 messages: a few statements a pass
    expect(small.recallIndexing).toBeGreaterThan(0);
    expect(large.recallIndexing).toBeLessThanOrEqual(small.recallIndexing * 4);
  });

  it('a consolidation reads its batches once each step, without their ledgers, and merges the ledgers a page at a time', async () => {
    await seedConversation(stack, 'rt-merge', history(60, 'rt-merge'), { policy: { ...POLICY, maxLiveBatches: 2 } });
    const job = await compact(stack, 'rt-merge', { strategy: 'summarize' });
    await processPlan({ jobId: job.id }, deps);
    for (const chunk of await listChunks(counted.db, job.id)) await processSummarizeChunk({ jobId: job.id, chunkIndex: chunk.idx }, deps);
    await processFinalize({ jobId: job.id }, deps);
    const consolidationId = (await getJob(counted.db, job.id))?.result?.['consolidationJobId'] as string;
    expect(consolidationId).toBeTruthy();
    captured = [];
    await processPlan({ jobId: consolidationId }, deps);
    await processSummarizeChunk({ jobId: consolidationId, chunkIndex: 0 }, deps);
    const finalizeFrom = captured.length;
    await processFinalize({ jobId: consolidationId }, deps);
    const queries = captured;
    captured = null;
    // finalize reads the merge's ledger once, alone, and the merged batch copies it in SQL
    const finalizing = queries.slice(finalizeFrom);
    const chunkLedgerReads = finalizing.filter(
      (q) => /^\s*select\b/i.test(q) && /\bfrom "compaction_chunks"/.test(q) && /"ledger"/.test(q),
    );
    expect(chunkLedgerReads).toHaveLength(1);
    expect(chunkLedgerReads[0]).toMatch(/^select "idx", "ledger" from "compaction_chunks"/);
    expect(finalizing.some((q) => /insert into "batches"/.test(q) && /select c\.ledger from compaction_chunks c/.test(q))).toBe(true);
    expect((await getJob(counted.db, consolidationId))?.status).toBe('completed');
    const [merge] = await listChunks(counted.db, consolidationId);
    expect(merge?.ledger).not.toBeNull();
    const batchReads = queries.filter((q) => /^\s*select\b/i.test(q) && /\bfrom "batches"/.test(q));
    const ledgerReads = batchReads.filter((q) => /"ledger"/.test(q));
    // plan: the live batches; summarize: the absorbed ones; finalize: the live ones — each once, without ledgers
    expect(batchReads.length - ledgerReads.length).toBe(3);
    // a ledger is read only by the merge (a page of absorbed batches) and for the batch that stays live
    expect(ledgerReads.every((q) => /^select "id", "ledger" from "batches"/.test(q))).toBe(true);
    expect(ledgerReads.length).toBe(2);
  });

  it("finalize never reads the chunks' ledgers whole: the batches copy them in SQL and the commit merges them a page at a time", async () => {
    await seedConversation(stack, 'rt-ledgers', history(60, 'rt-ledgers'), { policy: POLICY });
    const job = await compact(stack, 'rt-ledgers', { strategy: 'summarize' });
    await processPlan({ jobId: job.id }, deps);
    for (const chunk of await listChunks(counted.db, job.id)) await processSummarizeChunk({ jobId: job.id, chunkIndex: chunk.idx }, deps);
    captured = [];
    await processFinalize({ jobId: job.id }, deps);
    const queries = captured;
    captured = null;
    expect((await getJob(counted.db, job.id))?.status).toBe('completed');
    const chunkReads = queries.filter((q) => /^\s*select\b/i.test(q) && /\bfrom "compaction_chunks"/.test(q));
    const ledgerReads = chunkReads.filter((q) => /"ledger"/.test(q));
    expect(chunkReads.length).toBeGreaterThan(ledgerReads.length);
    expect(ledgerReads.every((q) => /^select "idx", "ledger" from "compaction_chunks"/.test(q))).toBe(true);
    expect(ledgerReads).toHaveLength(1);
    expect(queries.some((q) => /insert into "batches"/.test(q) && /select c\.ledger from compaction_chunks c/.test(q))).toBe(true);
    const [batch] = await counted.sql<
      Array<{ ledger: unknown }>
    >`select ledger from batches where job_id = ${job.id} order by seqs[1] limit 1`;
    const [chunk] = await counted.sql<
      Array<{ ledger: unknown }>
    >`select ledger from compaction_chunks where job_id = ${job.id} and idx = 0`;
    expect(batch?.ledger).toEqual(chunk?.ledger);
    expect(batch?.ledger).not.toBeNull();
  });

  it('an append stores 500 messages with as many statements as 5', async () => {
    await seedConversation(stack, 'rt-append', [], { policy: { auto: false } });
    const [conversation] = await counted.db.select().from(conversations).where(eq(conversations.externalId, 'rt-append'));
    if (!conversation) throw new Error('conversation missing');
    const append = (messages: NormalizedMessage[]) => {
      const prepared = prepareAppend({ format: 'anthropic', messages }, { countTokens: deps.countTokens, maxMessageBytes: 1_000_000 });
      return count(() => counted.db.transaction((tx) => storeAppend(tx, conversation, prepared)));
    };
    const few = await append(history(2, 'few').slice(0, 5));
    const many = await append(history(125, 'many'));
    expect(many).toBe(few);
    // BEGIN, lock, tool pairing, counters + seqs, rows, COMMIT
    expect(many).toBeLessThanOrEqual(6);
  });
});
