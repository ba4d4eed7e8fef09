import OpenAI from 'openai';

import type { SummarizeRequest } from '../compaction/types.js';
import { DEFAULT_LLM_TIMEOUT_MS, type HttpAdapterOptions } from './http-options.js';
import { assertUsableOutput } from './output-check.js';
import { LlmError, type StopReason, type Summarizer, type SummarizeResult } from './port.js';
import { malformedResponse, sdkCallError } from './provider-errors.js';

/**
 * OpenAI Chat Completions adapter on the official SDK. It speaks to any OpenAI-compatible
 * server through `baseURL` (OPENAI_BASE_URL): vLLM (`http://host:8000/v1`), Ollama
 * (`http://localhost:11434/v1`), LiteLLM, OpenRouter (`https://openrouter.ai/api/v1`),
 * Gemini's OpenAI endpoint, or `compactd llm-sim` (`http://127.0.0.1:PORT/v1`).
 * Such servers often need no key; any placeholder works. `maxRetries: 0`: see retry.ts.
 */

export interface OpenAISummarizerOptions extends HttpAdapterOptions {
  /**
   * OpenAI's own API wants `max_completion_tokens` (its o-series reject `max_tokens`);
   * many compatible servers only know `max_tokens`. Default: the former for the official
   * API, the latter when a custom `baseURL` is set.
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens' | undefined;
}

type CreateParams = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;

/**
 * Maps a SummarizeRequest to Chat Completions parameters (compaction-v2 AC2.3/AC2.5): the
 * configured system prompt first, then every message in order with its role — system-role
 * context messages stay separate `system` messages, nothing is merged.
 */
export function buildOpenAIParams(
  request: SummarizeRequest,
  model: string,
  maxTokensField: 'max_tokens' | 'max_completion_tokens' = 'max_completion_tokens',
): CreateParams {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [];
  if (request.system.trim() !== '') messages.push({ role: 'system', content: request.system });
  for (const message of request.messages) messages.push({ role: message.role, content: message.content });
  if (!messages.some((m) => m.role !== 'system')) {
    throw new LlmError('bad_request', 'summarize request has no user or assistant content', { provider: 'openai' });
  }
  return { model, messages, [maxTokensField]: request.maxOutputTokens };
}

export function createOpenAISummarizer(options: OpenAISummarizerOptions): Summarizer {
  const defaultTimeoutMs = options.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS;
  const maxTokensField = options.maxTokensField ?? (options.baseURL === undefined ? 'max_completion_tokens' : 'max_tokens');
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseURL ?? null,
    maxRetries: 0,
    timeout: defaultTimeoutMs,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.defaultHeaders === undefined ? {} : { defaultHeaders: options.defaultHeaders }),
  });
  return {
    provider: 'openai',
    async summarize(request, { model, signal, timeoutMs }) {
      const params = buildOpenAIParams(request, model, maxTokensField);
      const startedAt = performance.now();
      let completion: OpenAI.Chat.ChatCompletion;
      try {
        completion = await client.chat.completions.create(params, {
          timeout: timeoutMs ?? defaultTimeoutMs,
          maxRetries: 0,
          ...(signal === undefined ? {} : { signal }),
        });
      } catch (error) {
        throw toLlmError(error, signal);
      }
      return toResult(completion, performance.now() - startedAt);
    },
  };
}

function toResult(completion: OpenAI.Chat.ChatCompletion, latencyMs: number): SummarizeResult {
  const choice = Array.isArray(completion?.choices) ? completion.choices[0] : undefined;
  if (choice === undefined || typeof choice.message !== 'object' || choice.message === null) {
    throw malformedResponse('openai', new Error('response has no choices[0].message'));
  }
  const text = choice.message.content ?? '';
  const stopReason = mapFinishReason(choice.finish_reason);
  const refused =
    choice.finish_reason === 'content_filter' || (typeof choice.message.refusal === 'string' && choice.message.refusal !== '');
  const reported = completion.usage;
  const cacheReadTokens = reported?.prompt_tokens_details?.cached_tokens ?? 0;
  const cacheWriteTokens = reported?.prompt_tokens_details?.cache_write_tokens ?? 0;
  const usage = {
    // prompt_tokens includes the cached part; the port counts uncached input separately.
    inputTokens: Math.max(0, (reported?.prompt_tokens ?? 0) - cacheReadTokens - cacheWriteTokens),
    outputTokens: reported?.completion_tokens ?? 0,
    cacheReadTokens,
    cacheWriteTokens,
  };
  assertUsableOutput({ provider: 'openai', text, stopReason, refused, usage, latencyMs });
  return { text, stopReason, model: completion.model, usage, latencyMs };
}

function mapFinishReason(reason: string | null | undefined): StopReason {
  if (reason === 'stop') return 'end';
  if (reason === 'length') return 'length';
  return 'other';
}

const OPENAI_ERRORS = {
  userAbort: OpenAI.APIUserAbortError,
  connectionTimeout: OpenAI.APIConnectionTimeoutError,
  connection: OpenAI.APIConnectionError,
  api: OpenAI.APIError,
};

export function toLlmError(error: unknown, signal: AbortSignal | undefined): LlmError {
  return sdkCallError('openai', error, signal, OPENAI_ERRORS, (apiError) => {
    const body = apiError.error as { message?: unknown } | undefined;
    return { type: apiError.type, code: apiError.code, message: typeof body?.message === 'string' ? body.message : apiError.message };
  });
}
