import { describe, expect, it } from 'vitest';

import type { ChunkRow } from '../../../src/db/repos/chunks.js';
import { llmTotals } from '../../../src/worker/llm-totals.js';

/** The `llm` part of a job result (SPEC §6.1) from its memoized chunks: sums, cache share, models and the unpriced ones. */

const chunk = (provider: string | null, model: string | null, usage: Partial<NonNullable<ChunkRow['usage']>>, costUsd: number) =>
  ({
    idx: 0,
    provider,
    model,
    calls: 1,
    costUsd,
    latencyMs: 100,
    fallback: null,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, ...usage },
  }) as unknown as ChunkRow;

describe('llmTotals', () => {
  it('sums the calls, reports the cache-read share and names the models the registry cannot price', () => {
    const { llm } = llmTotals([
      chunk('anthropic', 'claude-haiku-4-5', { inputTokens: 100, cacheReadTokens: 900, outputTokens: 50 }, 0.002),
      chunk('openai', 'my-finetune-7b', { inputTokens: 1000, outputTokens: 10 }, 0),
      chunk('local', 'local', { inputTokens: 10 }, 0),
    ]);
    expect(llm.calls).toBe(3);
    expect(llm.inputTokens).toBe(1110);
    expect(llm.cacheReadShare).toBeCloseTo(900 / 2010, 3);
    expect(llm.models).toEqual(['anthropic:claude-haiku-4-5', 'openai:my-finetune-7b', 'local:local']);
    // the local summarizer costs nothing by nature; an unknown hosted model is $0 only for want of prices
    expect(llm.unpricedModels).toEqual(['my-finetune-7b']);
  });

  it('names none when every model is priced', () => {
    expect(llmTotals([chunk('anthropic', 'claude-sonnet-4-5', { inputTokens: 10 }, 0.00003)]).llm.unpricedModels).toEqual([]);
  });
});
