import { itemType, PROVIDER_COMPACTION_KEY, RESPONSES_COMPACTION_TYPES } from './provider-clip.js';

/**
 * The OpenAI Responses API's input items in the form the gateway keys and stores: one item is
 * one stored message, in the Anthropic shape compactd's normalizer takes (SPEC §4), so the rest
 * of the gateway (keys, rewinds, stand-ins, the append) treats them as any other message.
 * - `message` items (roles user, assistant, system, developer; `input_text` / `output_text` /
 *   `refusal` parts or a string) become text and image blocks; `developer` is stored as `system`;
 * - `function_call` / `custom_tool_call` (and any other `*_call` with a `call_id`, such as
 *   `local_shell_call`) become a `tool_use` under the call id, their `*_output` items a
 *   `tool_result` answering it, so compaction keeps a call with its result;
 * - `reasoning` is stored as its summary (the encrypted reasoning is the provider's);
 * - a provider's compaction item (`compaction`, or `compaction_summary` as Codex once named it)
 *   is stored pinned, its item kept whole in `metadata.providerCompaction` (provider-clip.ts);
 * - anything else (hosted tool calls without a call id) as a marked text turn.
 * Nothing here decides what goes upstream: the provider gets the client's own items.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

const EMPTY = '[empty]';

/** What the gateway stores of one Responses input (or output) item. */
export function storableResponsesItem(item: Json): Json {
  const type = itemType(item);
  if (type === 'message') return storableMessageItem(item);
  if (RESPONSES_COMPACTION_TYPES.has(type)) return storableCompactionItem(item);
  const callId = item['call_id'];
  if (typeof callId === 'string' && callId !== '') {
    if (type.endsWith('_call_output'))
      return { role: 'tool', content: [{ type: 'tool_result', tool_use_id: callId, content: resultContent(item['output']) }] };
    if (type.endsWith('_call'))
      return { role: 'assistant', content: [{ type: 'tool_use', id: callId, name: callName(item, type), input: callInput(item, type) }] };
  }
  if (type === 'reasoning') return { role: 'assistant', content: [{ type: 'text', text: reasoningText(item) }] };
  return { role: type.endsWith('_output') ? 'user' : 'assistant', content: [{ type: 'text', text: `[${type}]` }] };
}

function storableMessageItem(item: Json): Json {
  const role = item['role'];
  const stored = role === 'developer' || role === 'system' ? 'system' : role === 'assistant' ? 'assistant' : 'user';
  const content = item['content'];
  // a string and the same text as one part are the same prompt, whichever form the client re-sends
  if (typeof content === 'string') return { role: stored, content: content.trim() === '' ? EMPTY : [{ type: 'text', text: content }] };
  const blocks = Array.isArray(content) ? content.map(storablePart).filter((block): block is Json => block !== null) : [];
  return { role: stored, content: blocks.length > 0 ? blocks : EMPTY };
}

/** A content part as a stored block; a blank text part is nothing (clients send `''` and no part alike). */
function storablePart(part: unknown): Json | null {
  if (!isObject(part)) return null;
  const type = part['type'];
  if (type === 'input_text' || type === 'output_text' || type === 'text' || type === 'summary_text') {
    return typeof part['text'] === 'string' && part['text'].trim() !== '' ? { type: 'text', text: part['text'] } : null;
  }
  if (type === 'refusal')
    return typeof part['refusal'] === 'string' && part['refusal'].trim() !== '' ? { type: 'text', text: part['refusal'] } : null;
  if (type === 'input_image' && typeof part['image_url'] === 'string')
    return { type: 'image', source: { type: 'url', url: part['image_url'] } };
  return { type: 'text', text: `[${String(type)}]` };
}

function callName(item: Json, type: string): string {
  const name = item['name'];
  return typeof name === 'string' && name !== '' ? name.slice(0, 256) : type;
}

/** A function call's arguments as JSON when they parse to an object; anything else as sent. */
function callInput(item: Json, type: string): unknown {
  if (type === 'function_call') {
    const args = item['arguments'];
    if (typeof args !== 'string') return args ?? {};
    if (args.trim() === '') return {};
    try {
      const parsed = JSON.parse(args) as unknown;
      return isObject(parsed) ? parsed : args;
    } catch {
      return args;
    }
  }
  if (type === 'custom_tool_call') return item['input'] ?? '';
  // a hosted call the client runs (local shell, apply_patch…): what it asks for, without the item's own ids
  const { type: _type, id: _id, status: _status, call_id: _callId, ...rest } = item;
  return rest;
}

function resultContent(output: unknown): string | Json[] {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) return output === undefined || output === null ? '' : JSON.stringify(output);
  return output.map(storablePart).filter((block): block is Json => block !== null);
}

function reasoningText(item: Json): string {
  const summary = Array.isArray(item['summary']) ? item['summary'] : [];
  const text = summary
    .map((part) => (isObject(part) && typeof part['text'] === 'string' ? part['text'] : ''))
    .filter((part) => part.trim() !== '')
    .join('\n');
  return text === '' ? '[reasoning]' : `[reasoning] ${text}`;
}

/**
 * A provider's compaction item, stored pinned (compactd never summarizes across it) with the
 * item itself, less its id and status (an answer's item and the same item sent back by the
 * client are one message). Its content is sealed: the stored text only says what it stands for.
 */
function storableCompactionItem(item: Json): Json {
  const { id: _id, status: _status, ...sealed } = item;
  return {
    role: 'assistant',
    content: [{ type: 'text', text: "[the provider's compaction of the conversation before this point; its summary is encrypted]" }],
    pinned: true,
    metadata: { [PROVIDER_COMPACTION_KEY]: { provider: 'openai', item: sealed } },
  };
}

/** A Responses request's `input` as items: a string is one user message, as the API reads it. */
export function inputItemsOf(body: Json): unknown[] {
  const input = body['input'];
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  return Array.isArray(input) ? input : [];
}
