import { decode, encode } from 'gpt-tokenizer';

import { requestedLengthTokens } from '../compaction/summarize/index.js';
import { sealResponsesItem, sealThresholdBlock, signCompaction } from './compaction-seal.js';
import type { FaultKind } from './faults.js';
import type { CacheUsage } from './prompt-cache.js';
import type { CallRecord, SimState } from './state.js';
import { buildSimSummary } from './summary.js';
import type { SimAnswer, SimCompactionAsk, SimRequest, SimUsage } from './types.js';
import { DEFAULT_COMPACTION_TRIGGER_TOKENS } from './wire-anthropic.js';

/**
 * What a simulated call answers once its cache is read: the text the model writes (the sim's
 * summary at the length asked for, cut at max_tokens) or the provider compaction the request
 * asked for, with the usage each part is billed.
 */

/** What the sim takes from compactd's own code to write its summaries and count tokens. */
export interface CompletionDeps {
  countTokens: (text: string) => number;
  extractIdentifiers: (text: string) => string[];
  errorLines: (text: string) => string[];
  extractPaths: (text: string) => string[];
}

/** What the call knows besides its request: each message's tokens and the organization (API key). */
export interface CallContext {
  messageTokens: number[];
  org: string;
}

/** Tokens a message costs beyond its content (role and framing), as the providers count. */
export const MESSAGE_OVERHEAD_TOKENS = 4;
const MIN_OUTPUT_TOKENS = 120;
/** What a provider compaction summarizes for when the request gives no instructions. */
const DEFAULT_COMPACTION_INSTRUCTIONS = 'Summarize the conversation above so that the work can continue from this summary alone.';

function answerId(request: SimRequest, record: CallRecord): string {
  switch (request.endpoint) {
    case '/v1/messages':
      return `msg_sim_${record.id}`;
    case '/v1/chat/completions':
      return `chatcmpl-sim-${record.id}`;
    case '/v1/responses':
      return `resp_sim_${record.id}`;
    case '/v1/responses/compact':
      return `cmpresp_sim_${record.id}`;
  }
}

export function answerWith(
  state: SimState,
  request: SimRequest,
  record: CallRecord,
  fault: FaultKind | null,
  deps: CompletionDeps,
  context: CallContext,
  cache: CacheUsage,
): SimAnswer {
  const id = answerId(request, record);
  const model = request.model;
  const input = {
    inputTokens: record.inputTokens - cache.readTokens - cache.writeTokens,
    cacheReadTokens: cache.readTokens,
    cacheWriteTokens: cache.writeTokens,
    cacheWrite1hTokens: cache.write1hTokens,
  };
  const count = (text: string | null): number => (text === null || text === '' ? 0 : deps.countTokens(text));
  const ask = request.compaction;
  const fires =
    ask !== undefined && (ask.kind !== 'compact_20260112' || record.inputTokens > (ask.triggerTokens ?? DEFAULT_COMPACTION_TRIGGER_TOKENS));
  if (!fires) {
    const { text, stop } = writeAnswer(state, request, record, fault, deps);
    return { id, model, text, stop, usage: { ...input, outputTokens: count(text) } };
  }
  record.compaction = ask.kind;
  const summary = compactionSummary(state, request, record, ask, fault, deps);
  const compacting: SimUsage = { ...input, outputTokens: count(summary) };
  // An Anthropic answer that is the compaction alone: one billed iteration, no text.
  const compactionOnly = (compaction: NonNullable<SimAnswer['compaction']>): SimAnswer => ({
    id,
    model,
    text: '',
    stop: 'compaction',
    usage: compacting,
    iterations: [{ type: 'compaction', ...compacting }],
    compaction,
  });
  switch (ask.kind) {
    case 'summarize':
      return compactionOnly({
        kind: ask.kind,
        content: summary,
        signature: summary === null ? null : signCompaction(summary),
        alone: true,
      });
    case 'compact_20260112': {
      const compaction = {
        kind: ask.kind,
        content: summary,
        encryptedContent: summary === null ? null : sealThresholdBlock(summary),
        alone: ask.pause === true,
      };
      if (compaction.alone) return compactionOnly(compaction);
      // the answer is sampled over the compacted context: the system prompt and the summary
      const { text, stop } = writeAnswer(state, request, record, fault, deps);
      const systemTokens = request.messages[0]?.role === 'system' ? (context.messageTokens[0] ?? 0) : 0;
      const answering: SimUsage = {
        inputTokens: systemTokens + count(summary) + MESSAGE_OVERHEAD_TOKENS,
        outputTokens: count(text),
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      };
      return {
        id,
        model,
        text,
        stop,
        usage: answering,
        iterations: [
          { type: 'compaction', ...compacting },
          { type: 'message', ...answering },
        ],
        compaction,
      };
    }
    case 'responses_compact':
    case 'compaction_trigger': {
      const content = summary ?? '';
      return {
        id,
        model,
        text: '',
        stop: 'compaction',
        usage: compacting,
        compaction: { kind: ask.kind, content, encryptedContent: sealResponsesItem(content, model), kept: ask.kept ?? [], alone: true },
      };
    }
  }
}

/**
 * The provider's summary of the conversation, from the sim's summary generator over the
 * request's turns and the instructions (or the default ones) as the directive. An Anthropic
 * compaction under an `empty` or `truncated` fault fails: null content, as the API reports a
 * failed compaction. OpenAI compactions always produce their item.
 */
function compactionSummary(
  state: SimState,
  request: SimRequest,
  record: CallRecord,
  ask: SimCompactionAsk,
  fault: FaultKind | null,
  deps: CompletionDeps,
): string | null {
  const anthropic = ask.kind === 'summarize' || ask.kind === 'compact_20260112';
  if (anthropic && (fault === 'empty' || fault === 'truncated')) return null;
  const { settings } = state;
  const directive = ask.instructions ?? DEFAULT_COMPACTION_INSTRUCTIONS;
  const asked = requestedLengthTokens(directive) ?? request.maxTokens;
  const length = Math.min(asked, request.maxTokens, Math.max(MIN_OUTPUT_TOKENS, Math.round(record.inputTokens * settings.outputRatio)));
  const turns = [...request.messages.filter((m) => m.role !== 'system'), { role: 'user' as const, content: directive }];
  return buildSimSummary(turns, { ...deps, lossRate: settings.lossRate, seed: settings.seed, targetTokens: length }).text;
}

/** The model's text answer: the sim's summary at the length the request asks for, cut at max_tokens. */
function writeAnswer(
  state: SimState,
  request: SimRequest,
  record: CallRecord,
  fault: FaultKind | null,
  deps: CompletionDeps,
): { text: string; stop: SimAnswer['stop'] } {
  const { settings } = state;
  // A model aims at the length its directive asks for (max_tokens when it names none), shorter
  // when the input is worth less; an overrunning one runs `factor` times past that, and
  // max_tokens stops it there as providers do.
  const asked = record.requestedTokens ?? request.maxTokens;
  const length = Math.min(asked, Math.max(MIN_OUTPUT_TOKENS, Math.round(record.inputTokens * settings.outputRatio)));
  // A model told to keep every path, error and name that lists all it sees (a profile that
  // `listsEverything`) writes on until max_tokens stops it, whatever length it was asked for.
  const target =
    settings.profile.listsEverything === true
      ? Number.POSITIVE_INFINITY
      : record.overrun
        ? Math.round(length * settings.overrun.factor)
        : length;
  let text = '';
  let stop: SimAnswer['stop'] = 'end';
  if (fault !== 'empty') {
    text = buildSimSummary(request.messages, { ...deps, lossRate: settings.lossRate, seed: settings.seed, targetTokens: target }).text;
    let tokens = encode(text);
    // Honour max_tokens like a model would: stop there and say so.
    const limit = fault === 'truncated' ? Math.min(request.maxTokens, Math.max(1, Math.floor(tokens.length / 2))) : request.maxTokens;
    if (tokens.length > limit || fault === 'truncated') {
      tokens = tokens.slice(0, limit);
      text = decode(tokens);
      stop = 'length';
    }
  }
  return { text, stop };
}
