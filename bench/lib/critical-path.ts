import { IDENTIFIERS_TO_KEEP_INTRO } from '../../src/compaction/prompt.js';
import type { CallRecord } from '../../src/llm-sim/state.js';
import { unionMs } from './stats.js';

/**
 * The LLM critical path of one compaction, from llm-sim's call log: the longest chunk
 * chain (a chunk's first call plus its identifier retry, when there is one) plus the
 * re-summary chain. Calls are told apart by their request body: a re-summary asks to
 * merge summaries; a retry is its first call's body plus the list of missing identifiers.
 */

export interface CallAnalysis {
  calls: number;
  okCalls: number;
  chunkChains: number;
  resummaryCalls: number;
  /** longest chunk chain (sum of its calls' durations) */
  longestChunkMs: number;
  resummaryMs: number;
  criticalPathMs: number;
  /** the physical limit: the longest single chunk call + the longest re-summary call */
  strictCriticalMs: number;
  /** input tokens by kind of call */
  tokensByKind: { first: number; retry: number; resummary: number };
  retries: number;
  /** time during which at least one call was in flight */
  llmUnionMs: number;
  /** sum of every call's duration (what a one-at-a-time caller would wait) */
  llmSumMs: number;
  firstStartMs: number;
  lastEndMs: number;
  inputTokens: number;
  outputTokens: number;
}

const RESUMMARY_MARK = 'Merge the summaries above';
const RETRY_MARK = IDENTIFIERS_TO_KEEP_INTRO.slice(0, 40);
const RETRY_SECTION = new RegExp(`${escape(IDENTIFIERS_TO_KEEP_INTRO)}[\\s\\S]*?(?=Answer with the summary only)`);

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function durationMs(call: CallRecord): number {
  return (call.endMs ?? call.startMs) - call.startMs;
}

export function analyzeCalls(calls: readonly CallRecord[]): CallAnalysis {
  const chains = new Map<string, number>();
  let resummaryMs = 0;
  let resummaryCalls = 0;
  let longestCall = 0;
  let longestResummaryCall = 0;
  let retries = 0;
  const tokensByKind = { first: 0, retry: 0, resummary: 0 };
  for (const call of calls) {
    const text = JSON.stringify(call.body ?? { id: call.id });
    const isRetry = text.includes(RETRY_MARK);
    if (text.includes(RESUMMARY_MARK)) {
      resummaryMs += durationMs(call);
      resummaryCalls += 1;
      if (!isRetry) longestResummaryCall = Math.max(longestResummaryCall, durationMs(call));
      tokensByKind[isRetry ? 'retry' : 'resummary'] += call.inputTokens;
      continue;
    }
    if (isRetry) retries += 1;
    else longestCall = Math.max(longestCall, durationMs(call));
    tokensByKind[isRetry ? 'retry' : 'first'] += call.inputTokens;
    const key = call.body === undefined ? `call-${call.id}` : text.replace(RETRY_SECTION, '');
    chains.set(key, (chains.get(key) ?? 0) + durationMs(call));
  }
  const longestChunkMs = Math.max(0, ...chains.values());
  return {
    calls: calls.length,
    okCalls: calls.filter((c) => c.outcome === 'ok').length,
    chunkChains: chains.size,
    resummaryCalls,
    longestChunkMs,
    resummaryMs,
    criticalPathMs: longestChunkMs + resummaryMs,
    strictCriticalMs: longestCall + longestResummaryCall,
    tokensByKind,
    retries,
    llmUnionMs: unionMs(calls.map((c) => [c.startMs, c.endMs ?? c.startMs] as const)),
    llmSumMs: calls.reduce((sum, c) => sum + durationMs(c), 0),
    firstStartMs: Math.min(...calls.map((c) => c.startMs)),
    lastEndMs: Math.max(...calls.map((c) => c.endMs ?? c.startMs)),
    inputTokens: calls.reduce((sum, c) => sum + c.inputTokens, 0),
    outputTokens: calls.reduce((sum, c) => sum + c.outputTokens, 0),
  };
}
