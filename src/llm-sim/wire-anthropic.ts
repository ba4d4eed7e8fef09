import { SimRequestError, contentText, type SimAnswer, type SimMessage, type SimRequest } from './types.js';
import { validateAnthropicRequest } from './validate-anthropic.js';
import { sseFrame, type WireErrorKind, type WireFormat } from './wire.js';

/**
 * The Anthropic Messages API as the official SDK sees it: `POST /v1/messages`, JSON or
 * SSE (message_start, content_block_start, ping, content_block_delta…, content_block_stop,
 * message_delta, message_stop), errors as `{type: "error", error: {type, message}}`.
 */

function parse(body: unknown): SimRequest {
  if (typeof body !== 'object' || body === null) throw new SimRequestError(400, 'request body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (typeof b['model'] !== 'string' || b['model'] === '') throw new SimRequestError(400, 'model: Field required');
  const maxTokens = b['max_tokens'];
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    throw new SimRequestError(400, 'max_tokens: Field required (an integer ≥ 1)');
  }
  // The API's message rules (roles, order, tool pairing, no blank text): see validate-anthropic.ts.
  const problem = validateAnthropicRequest(b);
  if (problem) throw new SimRequestError(400, problem.message, 'invalid_request', problem.param);
  const messages: SimMessage[] = [];
  const system = contentText(b['system']);
  if (system !== '') messages.push({ role: 'system', content: system });
  for (const raw of b['messages'] as Array<Record<string, unknown>>) {
    messages.push({ role: raw['role'] === 'assistant' ? 'assistant' : 'user', content: contentText(raw['content']) });
  }
  return { api: 'anthropic', model: b['model'], messages, maxTokens, stream: b['stream'] === true, includeUsage: true };
}

const stopReason = (answer: SimAnswer): string => (answer.stop === 'length' ? 'max_tokens' : 'end_turn');

function usage(answer: SimAnswer, outputTokens: number): Record<string, unknown> {
  return {
    input_tokens: answer.usage.inputTokens,
    output_tokens: outputTokens,
    cache_creation_input_tokens: answer.usage.cacheWriteTokens,
    cache_read_input_tokens: answer.usage.cacheReadTokens,
    service_tier: 'standard',
  };
}

function message(answer: SimAnswer, content: unknown[], stop: string | null, outputTokens: number): Record<string, unknown> {
  return {
    id: answer.id,
    type: 'message',
    role: 'assistant',
    model: answer.model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: usage(answer, outputTokens),
  };
}

const ERRORS: Record<WireErrorKind, { status: number; type: string }> = {
  rate_limit: { status: 429, type: 'rate_limit_error' },
  overloaded: { status: 529, type: 'overloaded_error' },
  server_error: { status: 500, type: 'api_error' },
  auth: { status: 401, type: 'authentication_error' },
  invalid_request: { status: 400, type: 'invalid_request_error' },
  context_length_exceeded: { status: 400, type: 'invalid_request_error' },
  not_found: { status: 404, type: 'not_found_error' },
};

export const anthropicWire: WireFormat = {
  parse,
  response: (answer) =>
    message(answer, answer.text === '' ? [] : [{ type: 'text', text: answer.text }], stopReason(answer), answer.usage.outputTokens),
  streamStart: (answer) => [
    sseFrame({ type: 'message_start', message: message(answer, [], null, 1) }, 'message_start'),
    sseFrame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
    sseFrame({ type: 'ping' }, 'ping'),
  ],
  streamDelta: (_answer, text) =>
    sseFrame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }, 'content_block_delta'),
  streamEnd: (answer) => [
    sseFrame({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
    sseFrame(
      { type: 'message_delta', delta: { stop_reason: stopReason(answer), stop_sequence: null }, usage: { output_tokens: answer.usage.outputTokens } },
      'message_delta',
    ),
    sseFrame({ type: 'message_stop' }, 'message_stop'),
  ],
  error: (kind, text) => {
    const { status, type } = ERRORS[kind];
    return { status, body: { type: 'error', error: { type, message: text } } };
  },
};
