import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { loadRealTranscript } from '../../../harness/transcripts.js';
import { beforeFinalDirective, isMergeRequest } from '../../../src/compaction/summarize/prompt.js';
import type { CallRecord } from '../../../src/llm-sim/state.js';
import { compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * Compactions against a simulated model that runs past the requested length on every
 * answer, as real models do: the runaway cap leaves room for it, so the job completes with
 * no local fallback and no call made in series after another call of the same step (chunk
 * or consolidation) had finished — read from llm-sim's call log.
 */

let sim: TestLlmSim;
let stack: Stack;
beforeAll(async () => {
  sim = await startTestLlmSim();
  stack = await createStack({ env: { ANTHROPIC_BASE_URL: sim.url, COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5' } });
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
});
beforeEach(() => {
  sim.control.reset();
  sim.control.setFaults({});
  // paced by length, so an overrunning answer also takes longer, as it would at a provider
  sim.control.setProfile({ name: 'brisk', firstTokenMs: 150, prefillTokensPerSecond: 200_000, outputTokensPerSecond: 4_000 });
  sim.control.configure({ overrun: { rate: 1, factor: 1.4 } });
});

const session = () => loadRealTranscript('spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl').conversations[0]!.messages;

/** A call's step: its messages up to the final directive (a second request of the same step differs only there). */
function stepOf(call: CallRecord): string {
  const body = call.body as { messages?: Array<{ content: unknown }> } | undefined;
  return JSON.stringify(
    (body?.messages ?? []).map((m) => beforeFinalDirective(typeof m.content === 'string' ? m.content : JSON.stringify(m.content))),
  );
}

/** Calls that started after another call of the same step had already finished. */
function serialCalls(calls: readonly CallRecord[]): CallRecord[] {
  return calls.filter((call) =>
    calls.some((other) => other.id !== call.id && stepOf(other) === stepOf(call) && other.endMs !== null && other.endMs <= call.startMs),
  );
}

describe('a model that overruns every answer', () => {
  it('completes a compaction and its consolidation with zero local fallbacks and no serial second call', async () => {
    await seedConversation(stack, 'overrun-all', session(), {
      policy: { auto: false, chunkTokens: 4000, keepRecent: 6, maxLiveBatches: 2 },
    });
    const job = await compact(stack, 'overrun-all', { strategy: 'summarize' });
    const done = await waitForJob(stack, job.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.result.fallbacks).toEqual([]);
    const consolidationId = done.result.consolidationJobId as string;
    expect(consolidationId, 'more batches than maxLiveBatches: a consolidation follows').toBeTruthy();
    const consolidation = await waitForJob(stack, consolidationId);
    expect(consolidation.status, JSON.stringify(consolidation.error)).toBe('completed');
    expect(consolidation.result.fallbacks).toEqual([]);

    const calls = sim.control.callLog();
    const merges = calls.filter((c) => isMergeRequest(JSON.stringify(c.body)));
    const chunkCalls = calls.filter((c) => !isMergeRequest(JSON.stringify(c.body)));
    expect(merges.length).toBeGreaterThan(0);
    expect(chunkCalls.length).toBe(done.progress.chunksTotal);
    // every answer ran past the length its directive asked for, and none was cut
    expect(calls.every((c) => c.overrun && c.outcome === 'ok')).toBe(true);
    expect(calls.filter((c) => c.requestedTokens !== null && c.outputTokens > c.requestedTokens).length).toBeGreaterThan(calls.length / 2);
    expect(calls.every((c) => c.outputTokens < c.maxTokens)).toBe(true);
    expect(serialCalls(calls)).toEqual([]);
    // what the jobs report is what the calls produced
    expect(done.result.llm.calls).toBe(chunkCalls.length);
    expect(done.result.llm.outputTokens).toBe(chunkCalls.reduce((sum, c) => sum + c.outputTokens, 0));
  });
});
