import { createHash } from 'node:crypto';

import { positionOfKey, type StoredKeys } from '../../db/repos/gateway-history.js';
import { PROVIDER_COMPACTION_KEY } from './provider-clip.js';
import { storableResponsesItem } from './responses-items.js';
import type { GatewayWire } from './wire.js';

export { positionOfKey };

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
export function historyStart(provider: GatewayWire, messages: readonly unknown[]): number {
  if (provider === 'anthropic') return 0;
  let start = 0;
  while (
    start < messages.length &&
    isObject(messages[start]) &&
    ['system', 'developer'].includes(String((messages[start] as Json)['role']))
  )
    start += 1;
  return start;
}

/**
 * The message in the shape compactd's normalizer takes for this provider's format. Text that
 * Postgres cannot hold (a NUL, a lone UTF-16 surrogate: an agent that `cat`s a binary file
 * sends them in a tool result) is stored with those characters replaced (U+2400 ␀, U+FFFD �):
 * the provider still gets the client's own bytes, which the gateway forwards, and the message
 * is stored rather than refused, so the conversation goes on being compacted.
 */
export function storableMessage(provider: GatewayWire, raw: unknown): Json {
  if (!isObject(raw)) return { role: 'user', content: storableText(String(raw)) };
  const storable =
    provider === 'anthropic' ? storableAnthropic(raw) : provider === 'responses' ? storableResponsesItem(raw) : storableOpenAI(raw);
  return withStorableText(storable) as Json;
}

const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `text` with every character Postgres cannot store replaced by a visible stand-in. */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE, (char) => (char === '\u0000' ? '\u2400' : '\ufffd'));
}

/** Every string and key of a storable message made storable (a tool input's keys are the client's); iterative, as inputs may nest deeply. */
function withStorableText(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (typeof value !== 'object' || value === null) return value;
  const root = copyOf(value as Record<string, unknown> | unknown[]);
  const stack: Array<Record<string, unknown> | unknown[]> = [root];
  while (stack.length > 0) {
    const node = stack.pop() as Record<string, unknown>;
    for (const key of Object.keys(node)) {
      const child = node[key];
      if (typeof child === 'string') node[key] = storableText(child);
      else if (typeof child === 'object' && child !== null) {
        const copy = copyOf(child as Record<string, unknown> | unknown[]);
        node[key] = copy;
        stack.push(copy);
      }
    }
  }
  return root;
}

/** A shallow copy, an object's keys made storable (their order kept). */
function copyOf(node: Record<string, unknown> | unknown[]): Record<string, unknown> | unknown[] {
  if (Array.isArray(node)) return [...node];
  const copy: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(node)) copy[storableText(key)] = child;
  return copy;
}

const PLACEHOLDER = (type: string) => ({ type: 'text', text: `[${type}]` });
const EMPTY = '[empty]';

function storableAnthropic(message: Json): Json {
  const content = message['content'];
  if (!Array.isArray(content))
    return { role: message['role'], content: typeof content === 'string' && content.trim() !== '' ? content : EMPTY };
  const blocks = content.map(storableAnthropicBlock).filter((b): b is Json => b !== null);
  // an empty list and an empty string are the same empty turn, whichever a client re-sends
  const storable: Json = { role: message['role'], content: blocks.length > 0 ? blocks : EMPTY };
  const compaction = content.find(isCompactionBlock);
  if (!compaction) return storable;
  // the provider's compaction (provider-clip.ts): kept whole, pinned so compactd never summarizes across it
  const { cache_control: _cacheControl, ...block } = compaction;
  return { ...storable, pinned: true, metadata: { [PROVIDER_COMPACTION_KEY]: { provider: 'anthropic', item: block } } };
}

/** A compaction block that stands for the conversation before it (a null content is a compaction that failed). */
const isCompactionBlock = (block: unknown): block is Json =>
  isObject(block) && block['type'] === 'compaction' && typeof block['content'] === 'string';

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
      const parts = Array.isArray(inner)
        ? inner.map(storableResultPart).filter((p): p is Json => p !== null)
        : typeof inner === 'string'
          ? inner
          : '';
      return {
        type: 'tool_result',
        tool_use_id: block['tool_use_id'],
        content: parts,
        ...(typeof block['is_error'] === 'boolean' ? { is_error: block['is_error'] } : {}),
      };
    }
    // the provider's summary of what came before: readable, stored as its text (the block itself in the message's metadata)
    case 'compaction':
      return isCompactionBlock(block) && String(block['content']).trim() !== '' ? { type: 'text', text: block['content'] } : null;
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
      if (part['type'] === 'image_url' && isObject(part['image_url']))
        return { type: 'image_url', image_url: { url: String(part['image_url']['url'] ?? '') } };
      return PLACEHOLDER(String(part['type']));
    });
    // `''` and `null` are the same absent content: an SDK re-sends a tool-call-only answer either way
  } else out['content'] = typeof content === 'string' && content !== '' ? content : null;
  if (typeof message['name'] === 'string') out['name'] = message['name'];
  if (Array.isArray(message['tool_calls']) && message['tool_calls'].length > 0) {
    out['tool_calls'] = message['tool_calls'].filter(isObject).map((call) => {
      const fn = isObject(call['function']) ? call['function'] : {};
      return {
        id: call['id'],
        type: 'function',
        function: {
          name: fn['name'],
          arguments: typeof fn['arguments'] === 'string' ? fn['arguments'] : JSON.stringify(fn['arguments'] ?? {}),
        },
      };
    });
  }
  if (typeof message['tool_call_id'] === 'string') out['tool_call_id'] = message['tool_call_id'];
  if (out['content'] === null && out['tool_calls'] === undefined) out['content'] = EMPTY;
  return out;
}

/** `m<position>-<sha256 prefix of the storable message>` */
export function historyKey(position: number, storable: Json): string {
  return `m${position}-${createHash('sha256').update(JSON.stringify(storable)).digest('hex').slice(0, 24)}`;
}

export type SyncPlan =
  /** append `fromPosition`.. of the history (nothing when it equals the history's length) */
  | { kind: 'extend'; fromPosition: number }
  /**
   * the client continues an earlier point of the active history (a retry, an edited or rewound
   * turn): the stored turns from `position` on leave for the archive, the client's are appended
   */
  | { kind: 'rewind'; position: number }
  /** the client's history differs from the stored one inside its compacted prefix, at `position` */
  | { kind: 'diverged-compacted'; position: number }
  /** the client's history shares not even its first message with the stored one: another thread */
  | { kind: 'other-thread' };

/**
 * Compares the keys of the client's history with the stored ones. The client's history is the
 * truth for what the provider sees: when the stored history is a prefix of it, the rest is
 * appended; when it continues an earlier point of the stored history, the stored history
 * follows it (rewind). A divergence inside the compacted prefix cannot be followed (the
 * originals there are summarized): that request alone is forwarded as sent. A history that
 * differs at its very first message is not this conversation's (a side request, a sub-agent,
 * another agent under the same id, an edited first turn): it is stored as a thread of its own.
 */
export function planSync(clientKeys: readonly string[], stored: StoredKeys): SyncPlan {
  let storedLength = 0;
  for (const position of stored.keys.keys()) storedLength = Math.max(storedLength, position + 1);
  const shared = sharedPrefix(clientKeys, stored.keys);
  if (shared === storedLength) return { kind: 'extend', fromPosition: storedLength };
  if (shared === 0) return { kind: 'other-thread' };
  if (shared < stored.activeFrom) return { kind: 'diverged-compacted', position: shared };
  return { kind: 'rewind', position: shared };
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
