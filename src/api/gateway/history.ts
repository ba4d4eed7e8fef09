import { createHash } from 'node:crypto';
import type { GatewayProvider } from './identity.js';

/**
 * The client's history as compactd stores it. A gateway request carries the agent's whole
 * history every time; each message is keyed by its position and its content, so the same
 * message re-sent by the next request is recognised and stored once. The content keyed is
 * the *storable* form: what compactd keeps of a message (text, images, tool calls and
 * results), without what a client changes between requests for the same message —
 * `cache_control` markers move to the newest turn, thinking blocks may be dropped, SDKs add
 * fields such as `caller` or `citations`.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Where the history starts in `messages`: OpenAI's leading system/developer messages are the
 * agent's instructions (like Anthropic's top-level `system`), forwarded untouched and not
 * stored as history.
 */
export function historyStart(provider: GatewayProvider, messages: readonly unknown[]): number {
  if (provider === 'anthropic') return 0;
  let start = 0;
  while (start < messages.length && isObject(messages[start]) && ['system', 'developer'].includes(String((messages[start] as Json)['role']))) start += 1;
  return start;
}

/** The message in the shape compactd's normalizer takes for this provider's format. */
export function storableMessage(provider: GatewayProvider, raw: unknown): Json {
  if (!isObject(raw)) return { role: 'user', content: String(raw) };
  return provider === 'anthropic' ? storableAnthropic(raw) : storableOpenAI(raw);
}

const PLACEHOLDER = (type: string) => ({ type: 'text', text: `[${type}]` });

function storableAnthropic(message: Json): Json {
  const content = message['content'];
  if (!Array.isArray(content)) return { role: message['role'], content: typeof content === 'string' && content.trim() !== '' ? content : '[empty]' };
  const blocks = content.map(storableAnthropicBlock).filter((b): b is Json => b !== null);
  return { role: message['role'], content: blocks.length > 0 ? blocks : [PLACEHOLDER('empty')] };
}

function storableAnthropicBlock(block: unknown): Json | null {
  if (!isObject(block)) return null;
  switch (block['type']) {
    case 'text':
      return typeof block['text'] === 'string' && block['text'].trim() !== '' ? { type: 'text', text: block['text'] } : null;
    case 'image':
      return { type: 'image', source: block['source'] };
    case 'tool_use':
      return { type: 'tool_use', id: block['id'], name: block['name'], input: block['input'] ?? {} };
    case 'tool_result': {
      const inner = block['content'];
      const parts = Array.isArray(inner) ? inner.map(storableResultPart).filter((p): p is Json => p !== null) : typeof inner === 'string' ? inner : '';
      return { type: 'tool_result', tool_use_id: block['tool_use_id'], content: parts, ...(typeof block['is_error'] === 'boolean' ? { is_error: block['is_error'] } : {}) };
    }
    // reasoning is the provider's, re-sent or dropped by the client at will: not history
    case 'thinking':
    case 'redacted_thinking':
      return null;
    default:
      return PLACEHOLDER(String(block['type']));
  }
}

function storableResultPart(part: unknown): Json | null {
  if (!isObject(part)) return null;
  if (part['type'] === 'text') return typeof part['text'] === 'string' && part['text'] !== '' ? { type: 'text', text: part['text'] } : null;
  if (part['type'] === 'image') return { type: 'image', source: part['source'] };
  return PLACEHOLDER(String(part['type']));
}

function storableOpenAI(message: Json): Json {
  const out: Json = { role: message['role'] };
  const content = message['content'];
  if (Array.isArray(content)) {
    out['content'] = content.map((part) => {
      if (!isObject(part)) return PLACEHOLDER('part');
      if (part['type'] === 'text') return { type: 'text', text: String(part['text'] ?? '') };
      if (part['type'] === 'image_url' && isObject(part['image_url'])) return { type: 'image_url', image_url: { url: String(part['image_url']['url'] ?? '') } };
      return PLACEHOLDER(String(part['type']));
    });
  } else out['content'] = typeof content === 'string' ? content : null;
  if (typeof message['name'] === 'string') out['name'] = message['name'];
  if (Array.isArray(message['tool_calls']) && message['tool_calls'].length > 0) {
    out['tool_calls'] = message['tool_calls'].filter(isObject).map((call) => {
      const fn = isObject(call['function']) ? call['function'] : {};
      return { id: call['id'], type: 'function', function: { name: fn['name'], arguments: typeof fn['arguments'] === 'string' ? fn['arguments'] : JSON.stringify(fn['arguments'] ?? {}) } };
    });
  }
  if (typeof message['tool_call_id'] === 'string') out['tool_call_id'] = message['tool_call_id'];
  if (out['content'] === null && out['tool_calls'] === undefined) out['content'] = '[empty]';
  return out;
}

/** `m<position>-<sha256 prefix of the storable message>` */
export function historyKey(position: number, storable: Json): string {
  return `m${position}-${createHash('sha256').update(JSON.stringify(storable)).digest('hex').slice(0, 24)}`;
}

export function positionOfKey(key: string): number | null {
  const match = /^m(\d+)-/.exec(key);
  return match ? Number(match[1]) : null;
}

export type SyncPlan =
  /** append `fromPosition`.. of the history (nothing when it equals the history's length) */
  | { kind: 'extend'; fromPosition: number }
  /** the history is not a continuation of the stored one: it differs at `position` */
  | { kind: 'diverged'; position: number };

/**
 * Compares the keys of the client's history with the keys compactd stored for the
 * conversation (position → key). The stored history must be a prefix of the client's:
 * then the rest is appended. A client history that differs from it at some position (another
 * agent under the same conversation id, an edited or rewound history) is not mixed in.
 */
export function planSync(clientKeys: readonly string[], stored: ReadonlyMap<number, string>): SyncPlan {
  let storedLength = 0;
  for (const position of stored.keys()) storedLength = Math.max(storedLength, position + 1);
  for (let position = 0; position < storedLength; position += 1) {
    const key = clientKeys[position];
    if (key === undefined) return { kind: 'diverged', position };
    const known = stored.get(position);
    if (known !== undefined && known !== key) return { kind: 'diverged', position };
  }
  return { kind: 'extend', fromPosition: storedLength };
}

/**
 * How many leading messages of the client's history compactd stored as they are. Unlike
 * `planSync`, a stored history longer than the client's still shares its prefix: count_tokens
 * may be asked about a history that does not yet carry the answer compactd already stored.
 */
export function sharedPrefix(clientKeys: readonly string[], stored: ReadonlyMap<number, string>): number {
  let position = 0;
  while (position < clientKeys.length && stored.get(position) === clientKeys[position]) position += 1;
  return position;
}
