import Anthropic from '@anthropic-ai/sdk';

import type { SummarizeMessage, SummarizeRequest } from '../compaction/types.js';
import { DEFAULT_LLM_TIMEOUT_MS, type HttpAdapterOptions } from './http-options.js';
import { findModel } from './models.js';
import { assertUsableOutput } from './output-check.js';
import { LlmError, type StopReason, type Summarizer, type SummarizeResult } from './port.js';
import { malformedResponse, sdkCallError } from './provider-errors.js';

/**
 * Anthropic Messages adapter on the official SDK. The SDK never retries (`maxRetries: 0`)
 * and always has an explicit timeout: retries belong to `retry.ts` (STACK.md pitfall).
 * Works unchanged against `compactd llm-sim` through `baseURL` / ANTHROPIC_BASE_URL.
 */

/** `baseURL` default https://api.anthropic.com; llm-sim: http://127.0.0.1:PORT (no /v1). */
export type AnthropicSummarizerOptions = HttpAdapterOptions;

/** Opening turn added when a chunk starts with an assistant message: the API wants `user` first. */
export const LEADING_USER_TURN = '(The conversation excerpt to summarize begins with an assistant turn.)';

type MessageParam = Anthropic.Messages.MessageParam;
type CreateParams = Anthropic.Messages.MessageCreateParamsNonStreaming;

/**
 * Maps a SummarizeRequest to Messages API parameters (compaction-v2 AC2.2/AC2.4/AC2.5):
 * system-role messages are appended, in order, to the configured system prompt, joined
 * by blank lines; user/assistant roles are kept; consecutive same-role messages are merged
 * because the API requires alternation; blank messages are dropped (the API rejects them).
 */
export function buildAnthropicParams(request: SummarizeRequest, model: string): CreateParams {
  const systemParts = [request.system, ...request.messages.filter((m) => m.role === 'system').map((m) => m.content)];
  const system = systemParts.filter((part) => part.trim() !== '').join('\n\n');
  const turns = mergeTurns(request.messages.filter((m): m is SummarizeMessage & { role: 'user' | 'assistant' } => m.role !== 'system'));
  if (turns.length === 0) {
    throw new LlmError('bad_request', 'summarize request has no user or assistant content', { provider: 'anthropic' });
  }
  if (turns[0]?.role === 'assistant') turns.unshift({ role: 'user', content: LEADING_USER_TURN });
  const last = turns[turns.length - 1];
  // A final assistant turn is a prefill, and the API rejects prefills ending in whitespace.
  if (last !== undefined && last.role === 'assistant') last.content = last.content.trimEnd();
  const messages = turns.map((turn): MessageParam => ({ role: turn.role, content: turn.content }));
  const first = messages[0];
  const prefix = cacheablePrefix(request, system, model);
  // the first turn opens with the shared prefix: a breakpoint after it lets the job's other calls read it from the cache
  if (first !== undefined && prefix !== null && typeof first.content === 'string' && first.content.startsWith(prefix)) {
    const rest = first.content.slice(prefix.length).replace(/^\n\n/, '');
    first.content = [
      { type: 'text', text: prefix, cache_control: { type: 'ephemeral' } },
      ...(rest === '' ? [] : [{ type: 'text' as const, text: rest }]),
    ];
  }
  return {
    model,
    max_tokens: request.maxOutputTokens,
    ...(system === '' ? {} : { system }),
    messages,
  };
}

/** Characters per token, low: a prefix estimated at the minimum is rather at it or above (code and paths run ~3–4). */
const CHARS_PER_TOKEN = 4;

/**
 * The text of the request's shared prefix (its first `sharedPrefix` user messages) when it and
 * the system prompt reach the model's minimum cacheable length; null when a breakpoint would
 * cache nothing (the provider ignores one below the minimum, and an unknown model's is unknown).
 */
export function cacheablePrefix(request: SummarizeRequest, system: string, model: string): string | null {
  const shared = request.messages.slice(0, request.sharedPrefix ?? 0);
  if (shared.length === 0 || shared.some((m) => m.role !== 'user')) return null;
  const minimum = findModel(model)?.minCacheTokens;
  const text = shared
    .map((m) => m.content)
    .filter((c) => c.trim() !== '')
    .join('\n\n');
  if (minimum === undefined || text === '' || (system.length + text.length) / CHARS_PER_TOKEN < minimum) return null;
  return text;
}

function mergeTurns(
  messages: Array<{ role: 'user' | 'assistant'; content: string }>,
): Array<{ role: 'user' | 'assistant'; content: string }> {
  const turns: Array<{ role: 'user' | 'assistant'; content: string }> = [];
  for (const message of messages) {
    if (message.content.trim() === '') continue;
    const previous = turns[turns.length - 1];
    if (previous !== undefined && previous.role === message.role) previous.content = `${previous.content}\n\n${message.content}`;
    else turns.push({ role: message.role, content: message.content });
  }
  return turns;
}

export function createAnthropicSummarizer(options: AnthropicSummarizerOptions): Summarizer {
  const defaultTimeoutMs = options.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS;
  const client = new Anthropic({
    apiKey: options.apiKey,
    baseURL: options.baseURL ?? null,
    maxRetries: 0,
    timeout: defaultTimeoutMs,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.defaultHeaders === undefined ? {} : { defaultHeaders: options.defaultHeaders }),
  });
  return {
    provider: 'anthropic',
    async summarize(request, { model, signal, timeoutMs }) {
      const params = buildAnthropicParams(request, model);
      const startedAt = performance.now();
      let message: Anthropic.Messages.Message;
      try {
        message = await client.messages.create(params, {
          timeout: timeoutMs ?? defaultTimeoutMs,
          maxRetries: 0,
          ...(signal === undefined ? {} : { signal }),
        });
      } catch (error) {
        throw toLlmError(error, signal);
      }
      return toResult(message, performance.now() - startedAt);
    },
  };
}

function toResult(message: Anthropic.Messages.Message, latencyMs: number): SummarizeResult {
  if (!Array.isArray(message?.content) || typeof message.usage !== 'object' || message.usage === null) {
    throw malformedResponse('anthropic', new Error('response has no content array or usage'));
  }
  const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  const stopReason = mapStopReason(message.stop_reason);
  const usage = {
    inputTokens: message.usage.input_tokens ?? 0,
    outputTokens: message.usage.output_tokens ?? 0,
    cacheReadTokens: message.usage.cache_read_input_tokens ?? 0,
    cacheWriteTokens: message.usage.cache_creation_input_tokens ?? 0,
  };
  assertUsableOutput({ provider: 'anthropic', text, stopReason, refused: message.stop_reason === 'refusal', usage, latencyMs });
  return { text, stopReason, model: message.model, usage, latencyMs };
}

function mapStopReason(reason: Anthropic.Messages.StopReason | null): StopReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'end';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    default:
      return 'other';
  }
}

const ANTHROPIC_ERRORS = {
  userAbort: Anthropic.APIUserAbortError,
  connectionTimeout: Anthropic.APIConnectionTimeoutError,
  connection: Anthropic.APIConnectionError,
  api: Anthropic.APIError,
};

export function toLlmError(error: unknown, signal: AbortSignal | undefined): LlmError {
  return sdkCallError('anthropic', error, signal, ANTHROPIC_ERRORS, (apiError) => ({
    type: apiError.type,
    code: apiError.errorCode,
    message: apiError.apiMessage ?? apiError.message,
  }));
}
