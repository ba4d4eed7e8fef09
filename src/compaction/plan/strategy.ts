import type { Strategy } from '../plan-types.js';

/**
 * Which way a compaction runs (SPEC §5.10). `native` asks the agent's own provider to compact
 * the whole span in one call (its summary item then opens the agent's context); compactd's
 * own strategies summarize chunks in parallel. `auto` picks per compaction and says why:
 * native when the provider offers it, nobody waits on the result and one call fits the
 * latency budget; parallel chunks when the agent is waiting (its history is over the window)
 * or the span is over one window, since one call cannot read it.
 */

export interface StrategyInputs {
  /** the request's strategy, else the policy's */
  requested: Strategy;
  /** the agent's provider when its compaction is usable here (agent setup known, provider configured), else why not */
  native: { provider: 'anthropic' | 'openai' } | { unavailable: string };
  /** active-history tokens the span would hold */
  spanTokens: number;
  contextLimit: number;
  /** the agent blocks on this compaction (the gateway holds its request until it commits) */
  agentWaiting: boolean;
  latencyBudgetMs: number;
}

export interface StrategyDecision {
  strategy: Strategy;
  reason: string;
  /** the estimate the rule compared with the budget, when it was made */
  estimatedNativeMs?: number;
}

/**
 * Wall time of one provider compaction over `spanTokens`: reading the span (prefill, ~4,000
 * tokens/s uncached) and writing a summary of about a fifteenth of it (capped at 8,000 tokens,
 * ~150 tokens/s). Conservative on purpose: a cached prefix reads faster. Sonnet's on-demand
 * compaction of a ~111k-token span takes 60–70 s; this says ~77 s.
 */
export function estimateNativeMs(spanTokens: number): number {
  const summaryTokens = Math.min(8_000, spanTokens / 15);
  return Math.round(1_500 + spanTokens / 4 + (summaryTokens * 1_000) / 150);
}

export function chooseStrategy(inputs: StrategyInputs): StrategyDecision {
  const { requested } = inputs;
  if (requested !== 'native' && requested !== 'auto') return { strategy: requested, reason: `strategy ${requested} was asked for` };
  if ('unavailable' in inputs.native) {
    return {
      strategy: requested === 'native' ? 'summarize' : 'auto',
      reason: `no provider compaction: ${inputs.native.unavailable}; compactd summarizes the span in parallel chunks`,
    };
  }
  if (requested === 'native') return { strategy: 'native', reason: `strategy native was asked for (${inputs.native.provider})` };
  if (inputs.agentWaiting)
    return { strategy: 'auto', reason: 'the agent is waiting on this compaction: parallel chunks answer in one round of short calls' };
  if (inputs.spanTokens > inputs.contextLimit)
    return {
      strategy: 'auto',
      reason: `the span (${inputs.spanTokens} tokens) is over one window (${inputs.contextLimit}): one call cannot read it`,
    };
  const estimatedNativeMs = estimateNativeMs(inputs.spanTokens);
  if (estimatedNativeMs > inputs.latencyBudgetMs)
    return {
      strategy: 'auto',
      reason: `one provider call would take ~${Math.round(estimatedNativeMs / 1000)} s, over the latency budget (${Math.round(inputs.latencyBudgetMs / 1000)} s)`,
      estimatedNativeMs,
    };
  return {
    strategy: 'native',
    reason: `${inputs.native.provider} compaction in one call (~${Math.round(estimatedNativeMs / 1000)} s, within the budget), in the background`,
    estimatedNativeMs,
  };
}
