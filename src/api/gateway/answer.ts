import { responsesAnswerFromJson, responsesStreamAccumulator } from './responses-answer.js';
import type { GatewayWire } from './wire.js';

type Json = Record<string, unknown>;

/** The model's answer as the client will send it back in its next request, and what it cost. */
export interface Answer {
  /** one message (Messages, Chat Completions), or the output items of a Responses call: each one history element */
  messages: Json[];
  /** the whole prompt the provider counted (cached parts included): what the auto trigger compares with the window */
  inputTokens: number | undefined;
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

function anthropicPromptTokens(usage: unknown): number | undefined {
  if (!isObject(usage) || typeof usage['input_tokens'] !== 'number') return undefined;
  return num(usage['input_tokens']) + num(usage['cache_creation_input_tokens']) + num(usage['cache_read_input_tokens']);
}

/** The answer of a non-streamed call; null when the body is not a provider answer. */
export function answerFromJson(provider: GatewayWire, body: unknown): Answer | null {
  if (!isObject(body)) return null;
  if (provider === 'responses') return responsesAnswerFromJson(body);
  if (provider === 'anthropic') {
    if (!Array.isArray(body['content'])) return null;
    return { messages: [{ role: 'assistant', content: body['content'] }], inputTokens: anthropicPromptTokens(body['usage']) };
  }
  const choice = Array.isArray(body['choices']) ? body['choices'][0] : undefined;
  if (!isObject(choice) || !isObject(choice['message'])) return null;
  const usage = body['usage'];
  return {
    messages: [{ ...choice['message'], role: 'assistant' }],
    inputTokens: isObject(usage) && typeof usage['prompt_tokens'] === 'number' ? usage['prompt_tokens'] : undefined,
  };
}

/**
 * Server-sent events, fed as the bytes arrive (chunks may split an event or a UTF-8
 * character anywhere): each complete event's `data` is handed to `onData`.
 */
export function createSseParser(onData: (data: string) => void): { push(chunk: Uint8Array): void; end(): void } {
  const decoder = new TextDecoder();
  let buffer = '';
  const drain = (final: boolean) => {
    buffer = buffer.replace(/\r\n?/g, '\n');
    let cut = buffer.indexOf('\n\n');
    while (cut !== -1 || (final && buffer.trim() !== '')) {
      const event = cut === -1 ? buffer : buffer.slice(0, cut);
      buffer = cut === -1 ? '' : buffer.slice(cut + 2);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
        .join('\n');
      if (data !== '') onData(data);
      cut = buffer.indexOf('\n\n');
    }
  };
  return {
    push(chunk) {
      buffer += decoder.decode(chunk, { stream: true });
      drain(false);
    },
    end() {
      buffer += decoder.decode();
      drain(true);
    },
  };
}

export interface StreamAccumulator {
  onData(data: string): void;
  /** the answer once the stream is complete; null when it ended early or in an error */
  result(): Answer | null;
}

/** Rebuilds an Anthropic Messages stream into the message it streamed. */
export function anthropicStreamAccumulator(): StreamAccumulator {
  const blocks: Json[] = [];
  const partialJson = new Map<number, string>();
  let inputTokens: number | undefined;
  let stopped = false;
  let failed = false;
  return {
    onData(data) {
      let event: unknown;
      try {
        event = JSON.parse(data);
      } catch {
        return;
      }
      if (!isObject(event)) return;
      const index = num(event['index']);
      switch (event['type']) {
        case 'message_start':
          if (isObject(event['message'])) inputTokens = anthropicPromptTokens(event['message']['usage']);
          break;
        case 'content_block_start':
          if (isObject(event['content_block'])) blocks[index] = { ...event['content_block'] };
          break;
        case 'content_block_delta': {
          const block = blocks[index];
          const delta = event['delta'];
          if (!block || !isObject(delta)) break;
          if (delta['type'] === 'text_delta') block['text'] = String(block['text'] ?? '') + String(delta['text'] ?? '');
          else if (delta['type'] === 'input_json_delta')
            partialJson.set(index, (partialJson.get(index) ?? '') + String(delta['partial_json'] ?? ''));
          else if (delta['type'] === 'thinking_delta')
            block['thinking'] = String(block['thinking'] ?? '') + String(delta['thinking'] ?? '');
          else if (delta['type'] === 'signature_delta') block['signature'] = String(delta['signature'] ?? '');
          // a provider compaction's summary (and, in threshold mode, its sealed copy) comes whole in one delta
          else if (delta['type'] === 'compaction_delta') {
            block['content'] = delta['content'] ?? null;
            if (delta['encrypted_content'] !== undefined) block['encrypted_content'] = delta['encrypted_content'];
          }
          break;
        }
        case 'content_block_stop': {
          const block = blocks[index];
          const json = partialJson.get(index);
          if (block && json !== undefined) {
            try {
              block['input'] = json === '' ? {} : JSON.parse(json);
            } catch {
              failed = true;
            }
          }
          break;
        }
        case 'message_delta': {
          const usage = event['usage'];
          // some providers report the prompt only at the end
          if (inputTokens === undefined && isObject(usage)) inputTokens = anthropicPromptTokens(usage);
          break;
        }
        case 'message_stop':
          stopped = true;
          break;
        case 'error':
          failed = true;
          break;
      }
    },
    result() {
      if (!stopped || failed) return null;
      return { messages: [{ role: 'assistant', content: blocks.filter((b) => b !== undefined) }], inputTokens };
    },
  };
}

/** Rebuilds an OpenAI Chat Completions stream (first choice) into the assistant message. */
export function openAIStreamAccumulator(): StreamAccumulator {
  let content = '';
  let sawContent = false;
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  let inputTokens: number | undefined;
  let done = false;
  let finished = false;
  return {
    onData(data) {
      if (data.trim() === '[DONE]') {
        done = true;
        return;
      }
      let chunk: unknown;
      try {
        chunk = JSON.parse(data);
      } catch {
        return;
      }
      if (!isObject(chunk)) return;
      if (isObject(chunk['usage']) && typeof chunk['usage']['prompt_tokens'] === 'number') inputTokens = chunk['usage']['prompt_tokens'];
      const choice = Array.isArray(chunk['choices']) ? chunk['choices'].find((c) => isObject(c) && num(c['index']) === 0) : undefined;
      if (!isObject(choice)) return;
      if (choice['finish_reason'] !== null && choice['finish_reason'] !== undefined) finished = true;
      const delta = choice['delta'];
      if (!isObject(delta)) return;
      if (typeof delta['content'] === 'string') {
        content += delta['content'];
        sawContent = true;
      }
      if (Array.isArray(delta['tool_calls'])) {
        for (const part of delta['tool_calls']) {
          if (!isObject(part)) continue;
          const at = num(part['index']);
          const call = (calls[at] ??= { id: '', name: '', arguments: '' });
          if (typeof part['id'] === 'string') call.id = part['id'];
          const fn = part['function'];
          if (isObject(fn)) {
            if (typeof fn['name'] === 'string') call.name += fn['name'];
            if (typeof fn['arguments'] === 'string') call.arguments += fn['arguments'];
          }
        }
      }
    },
    result() {
      if (!done && !finished) return null;
      const toolCalls = calls
        .filter((c) => c !== undefined)
        .map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
      return {
        messages: [{ role: 'assistant', content: sawContent ? content : null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) }],
        inputTokens,
      };
    },
  };
}

export function streamAccumulator(provider: GatewayWire): StreamAccumulator {
  if (provider === 'responses') return responsesStreamAccumulator();
  return provider === 'anthropic' ? anthropicStreamAccumulator() : openAIStreamAccumulator();
}
