import { beforeFinalDirective, isMergeRequest, REPAIR_HEADING } from '../../src/compaction/summarize/prompt.js';
import type { CallRecord } from '../../src/llm-sim/state.js';
import { unionMs } from './stats.js';

/**
 * The LLM critical path of one compaction, from llm-sim's call log: the longest chunk
 * chain (a chunk's call, plus a hedged second request raced beside a straggler, or the
 * shorter request after an answer cut before its last section), measured as the time at
 * least one of its calls was in flight. Consolidations run as follow-up jobs, off the compaction's path; they are
 * counted apart (`resummary*`). Calls are told apart by their request body: a consolidation
 * asks to merge batch summaries, a repair names the repair heading, and a second request of
 * a step repeats its first call's messages but for the final directive (its length line may change).
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
  /** the physical limit: the longest single chunk call */
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

type Body = { messages?: unknown[] };

/**
 * A chunk call's identity: its messages up to the final directive (what a second request of the step
 * changes), wherever the adapter put it (Anthropic merges the request into one user turn).
 */
function chainKey(call: CallRecord): string {
  const body = call.body as Body | undefined;
  if (!body || !Array.isArray(body.messages)) return `call-${call.id}`;
  return JSON.stringify(
    body.messages.map((m) => {
      const content = (m as { content?: unknown }).content;
      return beforeFinalDirective(typeof content === 'string' ? content : JSON.stringify(content));
    }),
  );
}

function durationMs(call: CallRecord): number {
  return (call.endMs ?? call.startMs) - call.startMs;
}

export function analyzeCalls(calls: readonly CallRecord[]): CallAnalysis {
  const chains = new Map<string, Array<readonly [number, number]>>();
  let resummaryMs = 0;
  let resummaryCalls = 0;
  let longestCall = 0;
  let retries = 0;
  const tokensByKind = { first: 0, retry: 0, resummary: 0 };
  for (const call of calls) {
    const text = JSON.stringify(call.body ?? { id: call.id });
    if (isMergeRequest(text)) {
      resummaryMs += durationMs(call);
      resummaryCalls += 1;
      tokensByKind.resummary += call.inputTokens;
      continue;
    }
    const key = text.includes(REPAIR_HEADING) ? `repair-${call.id}` : chainKey(call);
    const isRetry = chains.has(key) || key.startsWith('repair-');
    if (isRetry) retries += 1;
    longestCall = Math.max(longestCall, durationMs(call));
    tokensByKind[isRetry ? 'retry' : 'first'] += call.inputTokens;
    chains.set(key, [...(chains.get(key) ?? []), [call.startMs, call.endMs ?? call.startMs] as const]);
  }
  const longestChunkMs = Math.max(0, ...[...chains.values()].map((spans) => unionMs(spans)));
  return {
    calls: calls.length,
    okCalls: calls.filter((c) => c.outcome === 'ok').length,
    chunkChains: chains.size,
    resummaryCalls,
    longestChunkMs,
    resummaryMs,
    criticalPathMs: longestChunkMs,
    strictCriticalMs: longestCall,
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
