import { DEFAULT_TRIM_TOKENS, runSummarizationMiddleware } from '../bench/peers/langchain-middleware.js';
import type { HistoryMessage, NormalizedMessage } from '../src/compaction/types.js';
import { DEFAULT_POLICY } from '../src/config/policy.js';
import type { LlmSim } from '../src/llm-sim/server.js';

/**
 * The real LangChain v1 `summarizationMiddleware`, run as the bench runs it (bench/peers):
 * `createAgent` with `ChatAnthropic` pointed at llm-sim, told to summarize exactly the span
 * compactd compacted. Its summary is written by the same simulator as compactd's llm-sim
 * rows, so the two differ only in what each design asks of it and what it keeps.
 */

export interface LangChainSetting {
  key: string;
  label: string;
  /** undefined: the middleware's default trimming */
  trimTokensToSummarize: number | undefined;
}

export const LANGCHAIN_SETTINGS: readonly LangChainSetting[] = [
  {
    key: 'langchain-defaults',
    label: `LangChain summarizationMiddleware, defaults (trims the span to its last ${DEFAULT_TRIM_TOKENS.toLocaleString('en-US')} tokens) · llm-sim`,
    trimTokensToSummarize: undefined,
  },
  {
    key: 'langchain-whole-span',
    label: 'LangChain summarizationMiddleware, trimming covering the span · llm-sim',
    trimTokensToSummarize: Number.MAX_SAFE_INTEGER,
  },
];

/** Whether the eval runs the LangChain peer: on by default in a full run; `COMPACTD_EVAL_LANGCHAIN=0` skips it, `=1` adds it to a quick run. */
export function langchainEnabled(env: Record<string, string | undefined>, quick: boolean): boolean {
  const flag = env['COMPACTD_EVAL_LANGCHAIN'];
  if (flag === '0') return false;
  return flag === '1' || !quick;
}

function history(messages: readonly NormalizedMessage[]): HistoryMessage[] {
  return messages.map((m, i) => ({
    seq: i + 1,
    role: m.role,
    kind: 'message',
    content: m.content,
    tokens: 0,
    toolUseIds: [],
    toolResultIds: [],
  }));
}

export interface LangChainSummary {
  outcome: string;
  summary: string;
  wallMs: number;
}

/** The middleware's summary of `messages[0, spanEnd)`, the rest kept. */
export async function langchainSummary(
  sim: LlmSim,
  messages: readonly NormalizedMessage[],
  spanEnd: number,
  setting: LangChainSetting,
): Promise<LangChainSummary> {
  const run = await runSummarizationMiddleware({
    baseUrl: sim.url,
    history: history(messages),
    firstKeptIndex: spanEnd,
    maxOutputTokens: DEFAULT_POLICY.summaryMaxTokens,
    ...(setting.trimTokensToSummarize === undefined ? {} : { trimTokensToSummarize: setting.trimTokensToSummarize }),
    callLog: () => sim.callLog(),
  });
  return { outcome: run.outcome, summary: run.summary, wallMs: run.wallMs };
}
