import { ChatAnthropic } from '@langchain/anthropic';
import type { BaseMessage } from '@langchain/core/messages';
import { createAgent, createMiddleware, summarizationMiddleware } from 'langchain';

import type { HistoryMessage } from '../../src/compaction/types.js';
import type { CallRecord } from '../../src/llm-sim/state.js';
import { agentHistory } from './langchain-messages.js';

/**
 * The real peer: LangChain v1's `summarizationMiddleware`, run by `createAgent` with
 * `ChatAnthropic` pointed at llm-sim. The agent is given the whole conversation; the
 * middleware is told to fire on it (`trigger` = the message count) and to keep exactly the
 * messages compactd kept (`keep.messages`), so it summarizes the span compactd compacts.
 * A second middleware after it ends the run before the agent's own model call: the job
 * measured is the compaction, as for compactd. Everything else is the middleware's default
 * unless `trimTokensToSummarize` is given (its default trims the span to its last 4000
 * tokens before summarizing).
 */

export const DEFAULT_TRIM_TOKENS = 4_000;

export type MiddlewareOutcome = 'summarized' | 'error string' | 'not triggered';

export interface MiddlewareRun {
  outcome: MiddlewareOutcome;
  /** agent.invoke, end to end */
  wallMs: number;
  /** LangChain messages the agent held before / after the run */
  messagesBefore: number;
  messagesAfter: number;
  /** LangChain messages replaced by the summary message (the span) */
  replaced: number;
  /** LangChain messages of the span compactd compacted: what `replaced` should be */
  spanMessages: number;
  /** what the middleware put in place of the history (after its prefix), first 300 characters */
  summaryText: string;
  /** the same, whole: what an agent continues from */
  summary: string;
  /** the summarizer requests llm-sim answered during the run */
  calls: CallRecord[];
  inputTokens: number;
  outputTokens: number;
}

export interface MiddlewareOptions {
  baseUrl: string;
  /** every stored message of the conversation, chronological */
  history: readonly HistoryMessage[];
  /** index in `history` of the first message compactd kept */
  firstKeptIndex: number;
  maxOutputTokens: number;
  /** undefined: the middleware's default (4000) */
  trimTokensToSummarize?: number;
  model?: string;
  /** llm-sim's call log (read before and after the run: nothing else may call the sim meanwhile) */
  callLog: () => CallRecord[];
}

const ERROR_MARK = 'Error generating summary';

interface SummarizationOptions {
  model: ChatAnthropic;
  trigger: { messages: number };
  keep: { messages: number };
  trimTokensToSummarize?: number;
}

/** An agent middleware, opaque here: only handed from one langchain call to another. */
type Middleware = { readonly name: string };

/**
 * langchain's own signatures for these three are deeply generic (agent state inferred from
 * every middleware's zod schemas): letting tsc infer them doubled the project's type-check
 * time, and the options' zod v3 interop types resolve to `never` under this project's
 * `exactOptionalPropertyTypes`. The bench uses them through these narrow signatures; langchain
 * validates the options itself at run time and throws on a bad one.
 */
const summarizationWithOptions = summarizationMiddleware as unknown as (options: SummarizationOptions) => Middleware;
const middlewareWithHooks = createMiddleware as unknown as (config: {
  name: string;
  beforeModel: { canJumpTo: ['end']; hook: () => { jumpTo: 'end' } };
}) => Middleware;
const agentWith = createAgent as unknown as (params: { model: ChatAnthropic; tools: []; middleware: Middleware[] }) => {
  invoke(input: { messages: BaseMessage[] }): Promise<{ messages: BaseMessage[] }>;
};

export async function runSummarizationMiddleware(options: MiddlewareOptions): Promise<MiddlewareRun> {
  const { messages, spanMessages } = agentHistory(options.history, options.firstKeptIndex);
  const model = new ChatAnthropic({
    model: options.model ?? 'claude-haiku-4-5',
    apiKey: 'not-needed',
    anthropicApiUrl: options.baseUrl,
    // the same summary budget compactd's policy gives its summarizer (summaryMaxTokens)
    maxTokens: options.maxOutputTokens,
  });
  const summarization = summarizationWithOptions({
    model,
    trigger: { messages: messages.length },
    keep: { messages: messages.length - spanMessages },
    ...(options.trimTokensToSummarize === undefined ? {} : { trimTokensToSummarize: options.trimTokensToSummarize }),
  });
  // Runs after the summarization hook (hooks run in list order) and ends the agent there.
  const stopBeforeAgentModel = middlewareWithHooks({
    name: 'StopAfterCompaction',
    beforeModel: { canJumpTo: ['end'], hook: () => ({ jumpTo: 'end' }) },
  });
  const agent = agentWith({ model, tools: [], middleware: [summarization, stopBeforeAgentModel] });

  const lastIdBefore = Math.max(0, ...options.callLog().map((c) => c.id));
  const started = performance.now();
  const state = await agent.invoke({ messages });
  const wallMs = performance.now() - started;
  const calls = options.callLog().filter((c) => c.id > lastIdBefore);

  const after = state.messages;
  const first = after[0];
  const fired = first !== undefined && first.additional_kwargs?.['lc_source'] === 'summarization';
  const text = fired && typeof first.content === 'string' ? first.content : '';
  const outcome: MiddlewareOutcome = !fired ? 'not triggered' : text.includes(ERROR_MARK) ? 'error string' : 'summarized';
  const summaryText = text.slice(text.indexOf('\n\n') + 2);
  return {
    outcome,
    wallMs,
    messagesBefore: messages.length,
    messagesAfter: after.length,
    replaced: fired ? messages.length - (after.length - 1) : 0,
    spanMessages,
    summaryText: summaryText.slice(0, 300),
    summary: summaryText,
    calls,
    inputTokens: calls.reduce((sum, c) => sum + c.inputTokens, 0),
    outputTokens: calls.reduce((sum, c) => sum + c.outputTokens, 0),
  };
}
