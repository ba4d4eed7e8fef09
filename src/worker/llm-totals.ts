import type { ChunkResultRow } from '../db/repos/chunk-results.js';

/** The `llm`, `identifiers` and `fallbacks` parts of a job result (SPEC §6.1), from its memoized steps. */
export function llmTotals(results: readonly ChunkResultRow[]) {
  const sum = (pick: (r: ChunkResultRow) => number) => results.reduce((total, r) => total + pick(r), 0);
  return {
    llm: {
      calls: sum((r) => r.calls),
      inputTokens: sum((r) => r.usage.inputTokens),
      outputTokens: sum((r) => r.usage.outputTokens),
      cacheReadTokens: sum((r) => r.usage.cacheReadTokens),
      cacheWriteTokens: sum((r) => r.usage.cacheWriteTokens),
      costUsd: Math.round(sum((r) => r.costUsd) * 1e6) / 1e6,
      models: [...new Set(results.map((r) => `${r.provider}:${r.model}`))],
    },
    identifiers: { found: sum((r) => r.identifiersFound), total: sum((r) => r.identifiersTotal) },
    fallbacks: results.filter((r) => r.fallback !== null).map((r) => ({ step: r.chunkKey, reason: r.fallback })),
  };
}
