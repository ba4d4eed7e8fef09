import { canonicalKey, type PromptLayout } from './prompt-cache.js';
import { contentText, type SimAnswer, type SimMessage, type SimRequest, SimRequestError } from './types.js';
import { validateOpenAIRequest } from './validate-openai.js';
import { sseFrame, type WireErrorKind, type WireFormat } from './wire.js';

/**
 * OpenAI Chat Completions as the official SDK sees it: `POST /v1/chat/completions`, JSON
 * or SSE chunks ending in `data: [DONE]` (a usage chunk first when
 * `stream_options.include_usage`), errors as `{error: {message, type, param, code}}`.
 * Prompt caching is automatic (prompt-cache.ts): `usage.prompt_tokens_details.cached_tokens`,
 * counted inside `prompt_tokens`.
 */

function parse(body: unknown): SimRequest {
  if (typeof body !== 'object' || body === null) throw new SimRequestError(400, 'request body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (typeof b['model'] !== 'string' || b['model'] === '') throw new SimRequestError(400, 'you must provide a model parameter');
  // The API's message rules (roles, tool calls answered, no strays): see validate-openai.ts.
  const problem = validateOpenAIRequest(b);
  if (problem) throw new SimRequestError(400, problem.message, 'invalid_request', problem.param);
  const messages: SimMessage[] = (b['messages'] as Array<Record<string, unknown>>).map((m) => {
    const role = String(m['role']);
    return { role: role === 'developer' ? 'system' : (role as SimMessage['role']), content: contentText(m['content']) };
  });
  const limit = b['max_completion_tokens'] ?? b['max_tokens'];
  if (limit !== undefined && limit !== null && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1)) {
    throw new SimRequestError(400, "Invalid 'max_tokens': integer below minimum value 1");
  }
  const streamOptions = (b['stream_options'] ?? {}) as Record<string, unknown>;
  const layout: PromptLayout = {
    scheme: 'openai',
    tools: (Array.isArray(b['tools']) ? (b['tools'] as unknown[]) : []).map((tool) => ({ key: canonicalKey(tool), breakpoint: null })),
    messages: (b['messages'] as unknown[]).map((m) => ({
      blocks: [{ key: canonicalKey(m), text: contentText((m as Record<string, unknown>)['content']), breakpoint: null }],
    })),
  };
  return {
    api: 'openai',
    endpoint: '/v1/chat/completions',
    layout,
    model: b['model'],
    messages,
    maxTokens: typeof limit === 'number' ? limit : 4_096,
    stream: b['stream'] === true,
    includeUsage: streamOptions['include_usage'] === true,
  };
}

const finishReason = (answer: SimAnswer): string => (answer.stop === 'length' ? 'length' : 'stop');
const created = (): number => Math.floor(Date.now() / 1000);

function usage(answer: SimAnswer): Record<string, unknown> {
  const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = answer.usage;
  // prompt_tokens is the whole input; the cached part is reported inside it.
  const promptTokens = inputTokens + cacheReadTokens + cacheWriteTokens;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: outputTokens,
    total_tokens: promptTokens + outputTokens,
    prompt_tokens_details: { cached_tokens: cacheReadTokens, cache_write_tokens: cacheWriteTokens, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function chunk(answer: SimAnswer, choices: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: answer.id,
    object: 'chat.completion.chunk',
    created: created(),
    model: answer.model,
    system_fingerprint: 'fp_llm_sim',
    choices,
    ...extra,
  };
}

const ERRORS: Record<WireErrorKind, { status: number; type: string; code: string | null }> = {
  rate_limit: { status: 429, type: 'requests', code: 'rate_limit_exceeded' },
  overloaded: { status: 503, type: 'server_error', code: 'overloaded' },
  server_error: { status: 500, type: 'server_error', code: null },
  auth: { status: 401, type: 'invalid_request_error', code: 'invalid_api_key' },
  invalid_request: { status: 400, type: 'invalid_request_error', code: null },
  context_length_exceeded: { status: 400, type: 'invalid_request_error', code: 'context_length_exceeded' },
  not_found: { status: 404, type: 'invalid_request_error', code: 'model_not_found' },
};

export const openaiWire: WireFormat = {
  parse,
  response: (answer) => ({
    id: answer.id,
    object: 'chat.completion',
    created: created(),
    model: answer.model,
    system_fingerprint: 'fp_llm_sim',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: answer.text, refusal: null },
        logprobs: null,
        finish_reason: finishReason(answer),
      },
    ],
    usage: usage(answer),
  }),
  streamStart: (answer) => [
    sseFrame(chunk(answer, [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }])),
  ],
  streamDelta: (answer, text) => sseFrame(chunk(answer, [{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }])),
  streamEnd: (answer, request) => [
    sseFrame(chunk(answer, [{ index: 0, delta: {}, logprobs: null, finish_reason: finishReason(answer) }])),
    ...(request.includeUsage ? [sseFrame(chunk(answer, [], { usage: usage(answer) }))] : []),
    sseFrame('[DONE]'),
  ],
  error: (kind, text, param = null, errorCode = null) =>
    openaiError(kind, text, kind === 'context_length_exceeded' ? 'messages' : param, errorCode),
};

/** OpenAI's error body, shared by chat completions and the Responses API. */
export function openaiError(
  kind: WireErrorKind,
  text: string,
  param: string | null = null,
  errorCode: string | null = null,
): { status: number; body: unknown } {
  const { status, type, code } = ERRORS[kind];
  return { status, body: { error: { message: text, type, param, code: errorCode ?? code } } };
}
