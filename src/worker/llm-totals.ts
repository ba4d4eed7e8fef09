import type { ChunkRowWithoutLedger } from '../db/repos/chunks.js';
import { findModel } from '../llm/models.js';

/** The `llm` and `fallbacks` parts of a job result (SPEC §6.1), from its memoized chunks. */
export function llmTotals(chunks: readonly ChunkRowWithoutLedger[]) {
  const sum = (pick: (c: ChunkRowWithoutLedger) => number) => chunks.reduce((total, c) => total + pick(c), 0);
  const cacheRead = sum((c) => c.usage?.cacheReadTokens ?? 0);
  const input = sum((c) => (c.usage?.inputTokens ?? 0) + (c.usage?.cacheReadTokens ?? 0) + (c.usage?.cacheWriteTokens ?? 0));
  return {
    llm: {
      calls: sum((c) => c.calls),
      inputTokens: sum((c) => c.usage?.inputTokens ?? 0),
      outputTokens: sum((c) => c.usage?.outputTokens ?? 0),
      cacheReadTokens: sum((c) => c.usage?.cacheReadTokens ?? 0),
      cacheWriteTokens: sum((c) => c.usage?.cacheWriteTokens ?? 0),
      costUsd: Math.round(sum((c) => c.costUsd) * 1e6) / 1e6,
      // the share of the calls' whole input the provider read from its prompt cache (billed at a tenth)
      cacheReadShare: input === 0 ? 0 : Math.round((cacheRead / input) * 1000) / 1000,
      latencyMs: chunks.reduce((max, c) => Math.max(max, c.latencyMs), 0),
      models: [...new Set(chunks.flatMap((c) => (c.provider && c.model ? [`${c.provider}:${c.model}`] : [])))],
      // a model the registry has no prices for counts $0 in costUsd: named, so nobody reads that as free
      unpricedModels: [
        ...new Set(chunks.flatMap((c) => (c.provider && c.provider !== 'local' && c.model && !findModel(c.model) ? [c.model] : []))),
      ],
    },
    fallbacks: chunks.filter((c) => c.fallback !== null).map((c) => ({ step: `chunk-${c.idx}`, reason: c.fallback })),
  };
}
