import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { NormalizedMessage } from '../../../src/compaction/types.js';
import { loadConfig } from '../../../src/config/env.js';
import { listChunks } from '../../../src/db/repos/chunks.js';
import { getJob } from '../../../src/db/repos/jobs.js';
import { createSummarizers } from '../../../src/llm/create-summarizer.js';
import { DEFAULT_RETRY_POLICY } from '../../../src/llm/retry.js';
import { JOBS } from '../../../src/queue/catalog.js';
import type { WorkerDeps } from '../../../src/worker/deps.js';
import { processFinalize } from '../../../src/worker/processors/finalize.js';
import { processPlan } from '../../../src/worker/processors/plan.js';
import { processSummarizeChunk } from '../../../src/worker/processors/summarize.js';
import { compact, seedConversation } from '../../helpers/conversation.js';
import { startTestLlmSim, type TestLlmSim } from '../../helpers/llm-sim.js';
import { createStack, type Stack } from '../../helpers/stack.js';
import { workerStepDeps } from '../../helpers/worker-steps.js';

/**
 * A small plan runs its chunk calls and its commit inside the plan step (no queue hop per
 * step); anything but a clean run hands the rest to the summarize queue's flow, which pays
 * only for the chunks still missing. No queue consumer runs: the test drives the steps.
 */

let sim: TestLlmSim;
let stack: Stack;
let deps: WorkerDeps;
beforeAll(async () => {
  sim = await startTestLlmSim();
  const env = { ANTHROPIC_BASE_URL: sim.url, COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5' };
  stack = await createStack({ workers: false, env });
  // the retry layer waits out at most 100 ms: a retry-after of seconds defers the step
  const retryPolicy = { ...DEFAULT_RETRY_POLICY, maxRetryAfterMs: 100 };
  deps = { ...workerStepDeps(stack, { inlineChunks: 4 }), retryPolicy, summarizers: createSummarizers(loadConfig({ ...process.env, ...env }), { retryPolicy }) };
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
});
beforeEach(() => {
  sim.control.reset();
  sim.control.setFaults({});
  sim.control.setProfile('instant');
});

function history(turns: number, tag: string): NormalizedMessage[] {
  const words = (n: number, seed: number) => Array.from({ length: n }, (_, i) => `word${(seed * 31 + i) % 97}`).join(' ');
  return Array.from({ length: turns }, (_, t): NormalizedMessage[] => [
    { role: 'user', content: [{ type: 'text', text: `Please check src/mod${t}.ts ${words(30, t)}` }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: `${tag}_${t}`, name: 'read_file', input: { path: `src/mod${t}.ts` } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: `${tag}_${t}`, content: `error: ${words(120, t + 1)}` }] },
    { role: 'assistant', content: [{ type: 'text', text: `Done with turn ${t}. ${words(40, t + 2)}` }] },
  ]).flat();
}

const POLICY = { auto: false, chunkTokens: 1500, summaryMaxTokens: 400, keepRecent: 6 };

async function queued(jobId: string, chunks: number) {
  const finalize = await stack.deps.queues.compaction.getJob(JOBS.finalize.jobId({ jobId }));
  const steps = await Promise.all(Array.from({ length: chunks }, (_, chunkIndex) => stack.deps.queues.summarize.getJob(JOBS.summarizeChunk.jobId({ jobId, chunkIndex }))));
  return { finalize, steps: steps.filter((s) => s !== undefined) };
}

describe('a small plan', () => {
  it('summarizes its chunks and commits inside the plan step, without a queued step', async () => {
    await seedConversation(stack, 'inline-clean', history(12, 'ic'), { policy: POLICY });
    const job = await compact(stack, 'inline-clean', { strategy: 'summarize' });
    await processPlan({ jobId: job.id }, deps);

    const done = await getJob(stack.deps.db, job.id);
    expect(done?.status).toBe('completed');
    const chunks = await listChunks(stack.deps.db, job.id);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.length).toBeLessThanOrEqual(4);
    expect(sim.control.callLog()).toHaveLength(chunks.length);
    expect(done?.result).toMatchObject({ batchIds: expect.arrayContaining([expect.any(String)]), fallbacks: [] });
    expect(await queued(job.id, chunks.length)).toEqual({ finalize: undefined, steps: [] });
  });

  it('hands a deferred chunk to the summarize queue, which pays only for what is missing', async () => {
    await seedConversation(stack, 'inline-deferred', history(12, 'id'), { policy: POLICY });
    const job = await compact(stack, 'inline-deferred', { strategy: 'summarize' });
    sim.control.setFaults({ script: ['rate_limit'], retryAfterMs: 5_000 });
    await processPlan({ jobId: job.id }, deps);

    expect((await getJob(stack.deps.db, job.id))?.status).toBe('summarizing');
    const chunks = await listChunks(stack.deps.db, job.id);
    const pending = chunks.filter((c) => c.status !== 'done');
    expect(pending).toHaveLength(1);
    const flow = await queued(job.id, chunks.length);
    expect(await flow.finalize?.getState()).toBe('waiting-children');
    expect(flow.steps).toHaveLength(chunks.length);

    // the flow's steps, as the queue would run them: the done chunks cost no call
    sim.control.setFaults({});
    const before = sim.control.callLog().length;
    for (const chunk of chunks) await processSummarizeChunk({ jobId: job.id, chunkIndex: chunk.idx }, deps);
    expect(sim.control.callLog().length - before).toBe(1);
    await processFinalize({ jobId: job.id }, deps);
    const done = await getJob(stack.deps.db, job.id);
    expect(done?.status).toBe('completed');
    expect(done?.result).toMatchObject({ fallbacks: [] });
  });
});
