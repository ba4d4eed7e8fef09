import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { loadRealTranscript } from '../../../harness/transcripts.js';
import { waitFor } from '../../../harness/wait-for.js';
import { isMergeRequest } from '../../../src/compaction/summarize/prompt.js';
import { activeMessages, compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

let sim: TestLlmSim;
let stack: Stack;
beforeAll(async () => {
  sim = await startTestLlmSim();
  stack = await createStack({
    env: { ANTHROPIC_BASE_URL: sim.url, COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5', COMPACTD_LLM_MAX_ATTEMPTS: '2' },
  });
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

const session = () => loadRealTranscript('spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl').conversations[0]!.messages;
const small = () => loadRealTranscript('spotter-claude-code/subagent.jsonl').conversations[0]!.messages;
const smallPolicy = { auto: false, chunkTokens: 3000, summaryMaxTokens: 400, keepRecent: 4 };

async function snapshot(id: string) {
  const conv = (await stack.app.inject({ method: 'GET', url: `/v1/conversations/${id}`, headers: stack.auth() })).json();
  return { active: await activeMessages(stack, id), activeTokens: conv.activeTokens, compactionCount: conv.compactionCount };
}

async function archivedCount() {
  const rows = await stack.db.db.execute<{ n: number }>(sql`select count(*)::int as n from archived_messages`);
  return rows[0]?.n ?? 0;
}

describe('compaction through the Anthropic adapter against llm-sim', () => {
  it('summarizes the chunks of a real session in parallel and reports usage', async () => {
    sim.control.setProfile('fixed:700');
    // a generous output budget: llm-sim echoes every identifier, as a diligent model would
    await seedConversation(stack, 'parallel', session(), { policy: { auto: false, summaryMaxTokens: 4000 } });
    const job = await compact(stack, 'parallel', { strategy: 'summarize' });
    const done = await waitForJob(stack, job.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    const calls = sim.control.callLog().filter((c) => c.outcome === 'ok');
    expect(done.progress.chunksTotal).toBeGreaterThan(2);
    expect(calls.length).toBeGreaterThanOrEqual(done.progress.chunksTotal);
    expect(Math.max(...calls.map((c) => c.concurrencyAtStart))).toBeGreaterThanOrEqual(Math.min(4, done.progress.chunksTotal));
    // overlapping calls: the wall time of all calls is far below their sum
    const span = Math.max(...calls.map((c) => c.endMs ?? 0)) - Math.min(...calls.map((c) => c.startMs));
    const sum = calls.reduce((s, c) => s + ((c.endMs ?? 0) - c.startMs), 0);
    expect(span).toBeLessThan(sum / 2);
    expect(done.result.llm.calls).toBe(calls.length);
    expect(done.result.llm.inputTokens).toBe(calls.reduce((s, c) => s + c.inputTokens, 0));
    expect(done.result.llm.costUsd).toBeGreaterThan(0);
    expect(done.result.identifiers.total).toBeGreaterThan(0);
    expect(done.result.fallbacks).toEqual([]);
  });

  it('falls back to the local summarizer when the provider keeps failing (onLLMFailure: fallback)', async () => {
    sim.control.setFaults({ rates: { server_error: 1 } });
    await seedConversation(stack, 'faults-fallback', small(), { policy: smallPolicy });
    const done = await waitForJob(stack, (await compact(stack, 'faults-fallback', { strategy: 'summarize' })).id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.result.fallbacks.length).toBe(done.progress.chunksTotal);
    expect(done.result.fallbacks[0].reason).toBe('LLM_SERVER_ERROR');
    // at most COMPACTD_LLM_MAX_ATTEMPTS HTTP calls per chunk (a follow-up consolidation's calls are its own job's)
    const chunkCalls = sim.control.callLog().filter((c) => !isMergeRequest(JSON.stringify(c.body)));
    expect(chunkCalls.length).toBeLessThanOrEqual(2 * done.progress.chunksTotal);
  });

  // (an answer truncated at its cap is kept, not a failure: test/integration/worker/list-everything-cap.test.ts)
  it.each(['server_error', 'empty', 'rate_limit'] as const)('fails with nothing changed under onLLMFailure: fail (%s)', async (fault) => {
    sim.control.setFaults({ rates: { [fault]: 1 }, retryAfterMs: 50 });
    const id = `faults-fail-${fault}`;
    await seedConversation(stack, id, small(), { policy: smallPolicy });
    const before = await snapshot(id);
    const archivedBefore = await archivedCount();
    const done = await waitForJob(stack, (await compact(stack, id, { strategy: 'summarize', onLLMFailure: 'fail' })).id);
    expect(done.status).toBe('failed');
    expect(done.error.code).toMatch(/^LLM_/);
    expect(await snapshot(id)).toEqual(before);
    expect(await archivedCount()).toBe(archivedBefore);
  });

  it('cancels a job mid-summarize: in-flight calls are aborted and nothing changes', async () => {
    sim.control.setProfile('fixed:20000');
    await seedConversation(stack, 'cancel', small(), { policy: smallPolicy });
    const before = await snapshot('cancel');
    const job = await compact(stack, 'cancel', { strategy: 'summarize' });
    await waitFor(() => sim.control.inFlight() > 0, 20_000);
    const cancel = await stack.app.inject({ method: 'DELETE', url: `/v1/jobs/${job.id}`, headers: stack.auth() });
    expect(cancel.statusCode).toBe(200);
    expect(cancel.json().status).toBe('cancelled');
    await waitFor(() => sim.control.inFlight() === 0, 5_000);
    expect(sim.control.callLog().every((c) => c.outcome !== 'ok')).toBe(true);
    const again = await stack.app.inject({ method: 'DELETE', url: `/v1/jobs/${job.id}`, headers: stack.auth() });
    expect(again.statusCode).toBe(409);
    expect(await snapshot('cancel')).toEqual(before);
    expect((await waitForJob(stack, job.id)).status).toBe('cancelled');
  });
});
