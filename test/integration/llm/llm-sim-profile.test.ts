import { countTokens } from 'gpt-tokenizer';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { loadConfig } from '../../../src/config/env.js';
import { availableProviders, createSummarizers, summarizerFor } from '../../../src/llm/create-summarizer.js';
import { selectSummarizerModel } from '../../../src/llm/models.js';
import { plannedTiming, PROFILES } from '../../../src/llm-sim/profiles.js';
import { realCompactionRequest } from './compaction-request.js';

/**
 * SPEC §7 "done when": with COMPACTD_SUMMARIZER=anthropic:claude-haiku-4-5 and
 * ANTHROPIC_BASE_URL at llm-sim, the wired adapter works unchanged, and a compaction-size
 * call (~12k tokens in, ~1k out) takes the Haiku-like profile's time. A behaviour check
 * with a generous range, not a benchmark.
 */

let sim: TestLlmSim;
beforeAll(async () => {
  sim = await startTestLlmSim({ profile: 'haiku' });
});
afterAll(async () => {
  await sim.close();
});

it('answers a ~12k-token compaction request on the haiku profile in about its time', async () => {
  const config = loadConfig({ COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5', ANTHROPIC_BASE_URL: sim.url });
  const summarizers = createSummarizers(config);
  const selection = selectSummarizerModel({ configured: config.summarizer, availableProviders: availableProviders(summarizers) });
  expect(selection).toEqual({ provider: 'anthropic', model: 'claude-haiku-4-5' });

  const request = realCompactionRequest(countTokens, 12_000, 1_200);
  const startedAt = performance.now();
  const result = await summarizerFor(summarizers, selection.provider).summarize(request, { model: selection.model });
  const elapsedMs = performance.now() - startedAt;

  const [call] = sim.control.callLog();
  expect(call?.inputTokens).toBeGreaterThan(10_000);
  expect(result.usage.outputTokens).toBeGreaterThan(700);
  expect(result.usage.outputTokens).toBeLessThanOrEqual(1_200);
  const expected = plannedTiming(PROFILES['haiku']!, call?.inputTokens ?? 0, result.usage.outputTokens).totalMs;
  // ≈ 0.6 s + prefill + ~1k tokens at 70 tok/s ≈ 14-16 s
  expect(expected).toBeGreaterThan(10_000);
  expect(elapsedMs).toBeGreaterThanOrEqual(expected * 0.95);
  expect(elapsedMs).toBeLessThan(expected * 1.25 + 500);
});
