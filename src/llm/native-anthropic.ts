import Anthropic from '@anthropic-ai/sdk';

import { toLlmError } from './anthropic.js';
import { DEFAULT_LLM_TIMEOUT_MS, type HttpAdapterOptions } from './http-options.js';
import { ANTHROPIC_COMPACTION_BETA, type NativeCompactionResult, type NativeCompactor } from './native-port.js';
import { LlmError } from './port.js';
import { malformedResponse } from './provider-errors.js';

/** Room for the provider's summary; the API decides its length, this only bounds it. */
const COMPACTION_MAX_TOKENS = 16_000;

type Json = Record<string, unknown>;

/**
 * Anthropic on-demand compaction on the official SDK: the agent's system, tools and messages
 * with top-level `compaction: {type: "summarize"}` and the beta header. The SDK's types do
 * not know the parameter yet; the body is sent as built. The answer's single compaction block
 * is returned untouched; its cost is the `compaction` iteration of `usage.iterations` when
 * the API lists iterations, the top-level usage otherwise.
 */
export function createAnthropicCompactor(options: HttpAdapterOptions): NativeCompactor {
  const client = new Anthropic({
    apiKey: options.apiKey,
    baseURL: options.baseURL ?? null,
    maxRetries: 0,
    timeout: options.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  return {
    provider: 'anthropic',
    async compact(request, { signal, timeoutMs }) {
      const body: Json = {
        model: request.model,
        max_tokens: COMPACTION_MAX_TOKENS,
        ...(request.system === undefined ? {} : { system: request.system }),
        ...(request.tools === undefined || request.tools.length === 0 ? {} : { tools: request.tools }),
        messages: request.messages,
        compaction: { type: 'summarize', ...(request.instructions ? { instructions: request.instructions } : {}) },
      };
      const startedAt = performance.now();
      let message: Json;
      try {
        message = (await client.messages.create(body as unknown as Anthropic.Messages.MessageCreateParamsNonStreaming, {
          headers: { 'anthropic-beta': ANTHROPIC_COMPACTION_BETA },
          timeout: timeoutMs ?? options.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS,
          maxRetries: 0,
          ...(signal === undefined ? {} : { signal }),
        })) as unknown as Json;
      } catch (error) {
        throw toLlmError(error, signal);
      }
      return compactionResult(message, performance.now() - startedAt);
    },
  };
}

export function compactionResult(message: Json, latencyMs: number): NativeCompactionResult {
  const content = message['content'];
  const block = Array.isArray(content) ? (content as unknown[]).find((b) => isObject(b) && b['type'] === 'compaction') : undefined;
  if (!isObject(block)) throw malformedResponse('anthropic', new Error('the answer holds no compaction block'));
  if (typeof block['content'] !== 'string' || block['content'].trim() === '') {
    throw new LlmError('invalid_output', 'anthropic compaction returned no summary (a failed compaction)', {
      provider: 'anthropic',
      retryable: true,
    });
  }
  const usage = isObject(message['usage']) ? message['usage'] : {};
  const iterations = Array.isArray(usage['iterations']) ? (usage['iterations'] as unknown[]).filter(isObject) : [];
  const billed = iterations.find((it) => it['type'] === 'compaction') ?? usage;
  return {
    provider: 'anthropic',
    item: block,
    summary: block['content'],
    beta: block['signature'] != null ? ANTHROPIC_COMPACTION_BETA : null,
    model: typeof message['model'] === 'string' ? message['model'] : 'unknown',
    usage: {
      inputTokens: num(billed['input_tokens']),
      outputTokens: num(billed['output_tokens']),
      cacheReadTokens: num(billed['cache_read_input_tokens']),
      cacheWriteTokens: num(billed['cache_creation_input_tokens']),
    },
    latencyMs,
  };
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
