import OpenAI from 'openai';

import { DEFAULT_LLM_TIMEOUT_MS, type HttpAdapterOptions } from './http-options.js';
import type { NativeCompactor } from './native-port.js';
import { toLlmError } from './openai.js';
import { malformedResponse } from './provider-errors.js';

type Json = Record<string, unknown>;

/**
 * OpenAI's `POST /responses/compact` on the official SDK: the agent's instructions, tools and
 * input items; the answer's opaque `compaction` item is returned untouched (the kept user
 * messages it also lists are already in compactd's history). The item hides its summary, so
 * `summary` is null: compactd's own clip-archive for other formats comes from its archive.
 * OpenAI reports cached input inside `input_tokens`; it is subtracted so that the four usage
 * numbers add up, as everywhere in compactd (port.ts).
 */
export function createOpenAICompactor(options: HttpAdapterOptions): NativeCompactor {
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseURL ?? null,
    maxRetries: 0,
    timeout: options.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  return {
    provider: 'openai',
    async compact(request, { signal, timeoutMs }) {
      const body: Json = {
        model: request.model,
        input: request.messages,
        ...(typeof request.system === 'string' && request.system !== '' ? { instructions: request.system } : {}),
        ...(request.tools === undefined || request.tools.length === 0 ? {} : { tools: request.tools }),
      };
      const startedAt = performance.now();
      let answer: Json;
      try {
        answer = (await client.responses.compact(body as unknown as OpenAI.Responses.ResponseCompactParams, {
          timeout: timeoutMs ?? options.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS,
          maxRetries: 0,
          ...(signal === undefined ? {} : { signal }),
        })) as unknown as Json;
      } catch (error) {
        throw toLlmError(error, signal);
      }
      const output = Array.isArray(answer['output']) ? (answer['output'] as unknown[]) : [];
      const item = output.find((o): o is Json => typeof o === 'object' && o !== null && (o as Json)['type'] === 'compaction');
      if (!item || typeof item['encrypted_content'] !== 'string')
        throw malformedResponse('openai', new Error('the answer holds no compaction item'));
      const usage = (answer['usage'] ?? {}) as Json;
      const cached = num((usage['input_tokens_details'] as Json | undefined)?.['cached_tokens']);
      return {
        provider: 'openai',
        item,
        summary: null,
        beta: null,
        model: typeof answer['model'] === 'string' ? answer['model'] : request.model,
        usage: {
          inputTokens: Math.max(0, num(usage['input_tokens']) - cached),
          outputTokens: num(usage['output_tokens']),
          cacheReadTokens: cached,
          cacheWriteTokens: 0,
        },
        latencyMs: performance.now() - startedAt,
      };
    },
  };
}

const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
