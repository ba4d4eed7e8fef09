import { costUsd, findModel } from '../llm/models.js';
import type { LlmUsage } from '../llm/port.js';

const NONE: LlmUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

export interface AgentCacheEffect {
  /** the agent's model, whose prices these are */
  model: string;
  /** the prefix the agent's prompt cache held that the compaction invalidates */
  invalidatedTokens: number;
  /** the agent's next request: the new context written to its cache once */
  nextRequestUsd: number;
  /** the same request had nothing been compacted: the old prefix read from the cache */
  nextRequestWithoutCompactionUsd: number;
  /** every request after that: the new, shorter prefix read from the cache */
  laterRequestUsd: number;
}

/**
 * What a compaction does to the agent's own prompt cache (SPEC §5.10), at its model's list
 * prices: the old prefix stops being read, the new context is written once, then read. Null
 * when the conversation's model is unknown to the registry (no prices).
 */
export function agentCacheEffect(model: string | null, tokensBefore: number, tokensAfter: number): AgentCacheEffect | null {
  if (!model || !findModel(model)) return null;
  return {
    model,
    invalidatedTokens: tokensBefore,
    nextRequestUsd: costUsd(model, { ...NONE, cacheWriteTokens: tokensAfter }),
    nextRequestWithoutCompactionUsd: costUsd(model, { ...NONE, cacheReadTokens: tokensBefore }),
    laterRequestUsd: costUsd(model, { ...NONE, cacheReadTokens: tokensAfter }),
  };
}
