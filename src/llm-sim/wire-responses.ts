import { parseResponsesRequest } from './read-responses.js';
import { type SimAnswer, type SimRequest } from './types.js';
import { sseFrame, type WireFormat } from './wire.js';
import { openaiError } from './wire-openai.js';

/**
 * The OpenAI Responses API, enough for the official SDK (`client.responses.create`, `.stream`,
 * `.compact`) and the Codex CLI:
 * - `POST /v1/responses`: `input` a string or items — messages `{role, content}` (`input_text`,
 *   `output_text`, `refusal` parts or a string), `function_call` / `function_call_output`,
 *   `custom_tool_call` / `custom_tool_call_output`, `reasoning`, hosted tool calls (read as
 *   opaque history), `compaction` `{type, encrypted_content}` (`compaction_summary` too, as
 *   Codex names it; accepted when the sim issued it, else 400
 *   `invalid_encrypted_content`), `compaction_trigger` (the last item: the answer is the
 *   compaction, as from /responses/compact, inside a normal response); `instructions`, `tools`,
 *   `max_output_tokens`. Answers `{id, object: "response", status, output: [message items],
 *   usage: {input_tokens, input_tokens_details: {cached_tokens}, output_tokens,
 *   output_tokens_details: {reasoning_tokens}, total_tokens}}` (`input_tokens` includes the cached
 *   ones). Streamed: response.created, response.in_progress, response.output_item.added,
 *   response.content_part.added, response.output_text.delta…, response.output_text.done,
 *   response.content_part.done, response.output_item.done, response.completed (response.incomplete
 *   when max_output_tokens cut it), each with `event:` and a `sequence_number`.
 * - `POST /v1/responses/compact`: same body; answers `{id, object: "response.compaction",
 *   created_at, output: [the input's user messages…, {id, type: "compaction", encrypted_content}],
 *   usage}`. The encrypted_content hides the summary (compaction-seal.ts).
 * `previous_response_id` is refused (nothing is stored: send the whole input, as with
 * `store: false`). Caching is automatic, as for chat completions (prompt-cache.ts).
 */

const created = (): number => Math.floor(Date.now() / 1000);
/** `resp_sim_7` → `7`: output item ids derive from the response's. */
const baseId = (answer: SimAnswer): string => answer.id.slice(answer.id.lastIndexOf('_') + 1);

function usage(answer: SimAnswer): Record<string, unknown> {
  const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = answer.usage;
  const input = inputTokens + cacheReadTokens + cacheWriteTokens;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cacheReadTokens },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + outputTokens,
  };
}

const incomplete = (answer: SimAnswer): boolean => answer.stop === 'length';

function messageItem(answer: SimAnswer, text: string, done: boolean): Record<string, unknown> {
  return {
    id: `msg_sim_${baseId(answer)}`,
    type: 'message',
    status: done ? (incomplete(answer) ? 'incomplete' : 'completed') : 'in_progress',
    role: 'assistant',
    content: done ? [outputText(text)] : [],
  };
}

const outputText = (text: string): Record<string, unknown> => ({ type: 'output_text', text, annotations: [], logprobs: [] });

/** The kept user messages then the compaction item, as /responses/compact outputs them. */
function compactionItems(answer: SimAnswer): Array<Record<string, unknown>> {
  const compaction = answer.compaction;
  if (compaction === undefined) return [];
  const base = baseId(answer);
  return [
    ...(compaction.kept ?? []).map((item, k) => ({ id: `msg_sim_${base}_${k}`, status: 'completed', ...item })),
    { id: `cmp_sim_${base}`, type: 'compaction', encrypted_content: compaction.encryptedContent ?? '' },
  ];
}

function outputOf(answer: SimAnswer): Array<Record<string, unknown>> {
  return answer.compaction !== undefined ? compactionItems(answer) : [messageItem(answer, answer.text, true)];
}

function responseObject(answer: SimAnswer, request: SimRequest, state: 'in_progress' | 'done'): Record<string, unknown> {
  const done = state === 'done';
  return {
    id: answer.id,
    object: 'response',
    created_at: created(),
    status: done ? (incomplete(answer) ? 'incomplete' : 'completed') : 'in_progress',
    background: false,
    error: null,
    incomplete_details: done && incomplete(answer) ? { reason: 'max_output_tokens' } : null,
    model: answer.model,
    output: done ? outputOf(answer) : [],
    previous_response_id: null,
    truncation: 'disabled',
    service_tier: 'default',
    ...request.echo,
    usage: done ? usage(answer) : null,
  };
}

/** Each stream numbers its events from 0. */
const sequences = new WeakMap<SimAnswer, number>();
function event(answer: SimAnswer, type: string, data: Record<string, unknown>): string {
  const n = sequences.get(answer) ?? 0;
  sequences.set(answer, n + 1);
  return sseFrame({ type, sequence_number: n, ...data }, type);
}

export const responsesWire: WireFormat = {
  parse: parseResponsesRequest('/v1/responses'),
  response: (answer, request) => responseObject(answer, request, 'done'),
  streamStart: (answer, request) => {
    const frames = [
      event(answer, 'response.created', { response: responseObject(answer, request, 'in_progress') }),
      event(answer, 'response.in_progress', { response: responseObject(answer, request, 'in_progress') }),
    ];
    if (answer.compaction === undefined) {
      const item = messageItem(answer, '', false);
      frames.push(
        event(answer, 'response.output_item.added', { output_index: 0, item }),
        event(answer, 'response.content_part.added', { item_id: item['id'], output_index: 0, content_index: 0, part: outputText('') }),
      );
    }
    return frames;
  },
  streamDelta: (answer, text) =>
    event(answer, 'response.output_text.delta', {
      item_id: `msg_sim_${baseId(answer)}`,
      output_index: 0,
      content_index: 0,
      delta: text,
      logprobs: [],
    }),
  streamEnd: (answer, request) => {
    const frames: string[] = [];
    if (answer.compaction !== undefined) {
      compactionItems(answer).forEach((item, k) => {
        frames.push(
          event(answer, 'response.output_item.added', { output_index: k, item }),
          event(answer, 'response.output_item.done', { output_index: k, item }),
        );
      });
    } else {
      const item = messageItem(answer, answer.text, true);
      frames.push(
        event(answer, 'response.output_text.done', {
          item_id: item['id'],
          output_index: 0,
          content_index: 0,
          text: answer.text,
          logprobs: [],
        }),
        event(answer, 'response.content_part.done', {
          item_id: item['id'],
          output_index: 0,
          content_index: 0,
          part: outputText(answer.text),
        }),
        event(answer, 'response.output_item.done', { output_index: 0, item }),
      );
    }
    frames.push(
      event(answer, incomplete(answer) ? 'response.incomplete' : 'response.completed', {
        response: responseObject(answer, request, 'done'),
      }),
    );
    return frames;
  },
  error: (kind, text, param = null, code = null) => openaiError(kind, text, kind === 'context_length_exceeded' ? 'input' : param, code),
};

/** `POST /v1/responses/compact`: never streamed. */
export const responsesCompactWire: WireFormat = {
  ...responsesWire,
  parse: parseResponsesRequest('/v1/responses/compact'),
  response: (answer) => ({
    id: answer.id,
    object: 'response.compaction',
    created_at: created(),
    output: compactionItems(answer),
    usage: usage(answer),
  }),
};
