import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { loadRealTranscript } from '../../../harness/transcripts.js';
import { waitFor } from '../../../harness/wait-for.js';
import { loadConfig } from '../../../src/config/env.js';
import { createSummarizers } from '../../../src/llm/create-summarizer.js';
import { DEFAULT_RETRY_POLICY } from '../../../src/llm/retry.js';
import { compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * A provider asking to come back later than the retry layer waits defers that step alone
 * (moved to delayed for the retry-after, no attempt spent), instead of falling back, and
 * instead of pausing the whole summarize queue: another provider's chunks keep flowing.
 * One llm-sim per provider, so a fault of one never touches the other.
 */

let anthropicSim: TestLlmSim;
let openaiSim: TestLlmSim;
let stack: Stack;
beforeAll(async () => {
  anthropicSim = await startTestLlmSim();
  openaiSim = await startTestLlmSim();
  const env = {
    ANTHROPIC_BASE_URL: anthropicSim.url,
    OPENAI_BASE_URL: openaiSim.openaiBaseUrl,
    COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5',
    COMPACTD_LLM_MAX_ATTEMPTS: '2',
  };
  // The in-process retry layer waits out at most 100 ms here, so a retry-after of seconds is "long".
  const retryPolicy = { ...DEFAULT_RETRY_POLICY, maxRetryAfterMs: 100 };
  const summarizers = createSummarizers(loadConfig(env), { retryPolicy });
  stack = await createStack({ env, workerOverrides: { summarizers, retryPolicy } });
});
afterAll(async () => {
  await stack?.close();
  await anthropicSim?.close();
  await openaiSim?.close();
});

const transcript = () => loadRealTranscript('spotter-claude-code/tool_heavy.jsonl').conversations[0]!.messages;

describe('a provider asking to come back later than the retry layer waits', () => {
  it('defers the step for its retry-after and retries it instead of falling back', async () => {
    await seedConversation(stack, 'deferred', transcript(), { policy: { auto: false, chunkTokens: 100_000 } });
    anthropicSim.control.setFaults({ script: ['rate_limit'], retryAfterMs: 1_500 });
    const done = await waitForJob(stack, (await compact(stack, 'deferred', { strategy: 'summarize', keepRecent: 2 })).id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.result.fallbacks).toEqual([]);
    const calls = anthropicSim.control.callLog();
    expect(calls[0]!.fault).toBe('rate_limit');
    const retried = calls.find((c) => c.outcome === 'ok')!;
    expect(retried.startMs - calls[0]!.startMs).toBeGreaterThanOrEqual(1_400);
  });

  it("does not pause another provider's chunks meanwhile", async () => {
    await seedConversation(stack, 'limited-provider', transcript(), { policy: { auto: false, chunkTokens: 100_000 } });
    await seedConversation(stack, 'other-provider', transcript(), { policy: { auto: false, chunkTokens: 100_000 } });
    const before = anthropicSim.control.callLog().length;
    anthropicSim.control.setFaults({ script: ['rate_limit'], retryAfterMs: 6_000 });
    const limited = await compact(stack, 'limited-provider', { strategy: 'summarize', keepRecent: 2 });
    await waitFor(
      () =>
        anthropicSim.control
          .callLog()
          .slice(before)
          .some((c) => c.fault === 'rate_limit'),
      30_000,
    );

    // while anthropic's step waits out its retry-after, an openai compaction runs to its end
    const other = await waitForJob(
      stack,
      (await compact(stack, 'other-provider', { strategy: 'summarize', keepRecent: 2, model: 'openai:gpt-4o-mini' })).id,
    );
    expect(other.status, JSON.stringify(other.error)).toBe('completed');
    expect(other.result.fallbacks).toEqual([]);
    const anthropicCalls = anthropicSim.control.callLog().slice(before);
    expect(anthropicCalls.filter((c) => c.outcome === 'ok')).toEqual([]);

    const done = await waitForJob(stack, limited.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.result.fallbacks).toEqual([]);
    const retried = anthropicSim.control
      .callLog()
      .slice(before)
      .find((c) => c.outcome === 'ok')!;
    const firstOpenai = openaiSim.control.callLog()[0]!;
    expect(firstOpenai.startMs).toBeLessThan(retried.startMs);
  });
});
