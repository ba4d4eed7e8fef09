import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { createSummarizers } from '../../src/llm/create-summarizer.js';
import { DEFAULT_RETRY_POLICY } from '../../src/llm/retry.js';
import { compact, seedConversation, waitForJob } from '../helpers/conversation.js';
import { startTestLlmSim, type TestLlmSim } from '../helpers/llm-sim.js';
import { createStack, type Stack } from '../helpers/stack.js';
import { loadRealTranscript } from '../helpers/transcripts.js';

let sim: TestLlmSim;
let stack: Stack;
beforeAll(async () => {
  sim = await startTestLlmSim();
  const env = { ANTHROPIC_BASE_URL: sim.url, COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5', COMPACTD_LLM_MAX_ATTEMPTS: '2' };
  // The in-process retry layer waits out at most 100 ms here, so a 1.5 s retry-after is "long".
  const retryPolicy = { ...DEFAULT_RETRY_POLICY, maxRetryAfterMs: 100 };
  const summarizers = createSummarizers(loadConfig(env), { retryPolicy });
  stack = await createStack({ env, workerOverrides: { summarizers, retryPolicy } });
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
});

describe('a provider asking to come back later than the retry layer waits', () => {
  it('rate-limits the summarize queue and retries the step instead of falling back', async () => {
    const messages = loadRealTranscript('spotter-claude-code/tool_heavy.jsonl').conversations[0]!.messages;
    await seedConversation(stack, 'deferred', messages, { policy: { auto: false, chunkTokens: 100_000 } });
    sim.control.setFaults({ script: ['rate_limit'], retryAfterMs: 1_500 });
    const done = await waitForJob(stack, (await compact(stack, 'deferred', { strategy: 'summarize', keepRecent: 2 })).id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.result.fallbacks).toEqual([]);
    const calls = sim.control.callLog();
    expect(calls[0]!.fault).toBe('rate_limit');
    const retried = calls.find((c) => c.outcome === 'ok')!;
    expect(retried.startMs - calls[0]!.startMs).toBeGreaterThanOrEqual(1_400);
  });
});
