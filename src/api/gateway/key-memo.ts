import { historyKey, storableMessage } from './history.js';
import type { GatewayWire } from './wire.js';

/**
 * The history keys of each conversation's last request, with the messages they were computed
 * from. An agent re-sends its whole history every turn, and keying it costs a JSON
 * serialization and a hash of every message (~5–8 ms for a 100k-token history). A message
 * equal to the one the last request carried at the same position has the same key (the key
 * is a function of the message alone), so only the messages that are new or changed are keyed.
 * Equality is structural and strict (same keys in the same order, same values): a message the
 * client edited is keyed again, and whether its key matches the stored one is decided as before.
 *
 * The memo holds the parsed messages of one request per conversation; past MAX_BODY_CHARS of
 * request bodies in all, the least recently used conversation is forgotten (keyed in full next time).
 */
const MAX_BODY_CHARS = 16 * 1024 * 1024;

interface Memo {
  provider: GatewayWire;
  messages: readonly unknown[];
  keys: readonly string[];
  /** the request body's length in characters, what this entry is charged against MAX_BODY_CHARS */
  weight: number;
}

const memos = new Map<string, Memo>();
let heldChars = 0;

/** The keys of `history` (positions from 0), reusing those of the conversation's last request where a message is unchanged. */
export function keysOfHistory(conversationId: string, provider: GatewayWire, history: readonly unknown[]): string[] {
  const memo = memos.get(conversationId);
  const previous = memo?.provider === provider ? memo : undefined;
  return history.map((message, position) => {
    const known = previous?.keys[position];
    if (known !== undefined && unchanged(message, previous?.messages[position])) return known;
    return historyKey(position, storableMessage(provider, message));
  });
}

/** Keeps a request's history and its keys for the conversation's next request. */
export function rememberKeys(
  conversationId: string,
  provider: GatewayWire,
  messages: readonly unknown[],
  keys: readonly string[],
  weight: number,
): void {
  forget(conversationId);
  if (weight > MAX_BODY_CHARS) return;
  memos.set(conversationId, { provider, messages, keys, weight });
  heldChars += weight;
  for (const [id] of memos) {
    if (heldChars <= MAX_BODY_CHARS) break;
    forget(id);
  }
}

function forget(conversationId: string): void {
  const memo = memos.get(conversationId);
  if (!memo) return;
  memos.delete(conversationId);
  heldChars -= memo.weight;
}

/** A message nested too deeply to compare (a stack overflow) counts as changed: it is keyed as before. */
function unchanged(message: unknown, previous: unknown): boolean {
  try {
    return sameJson(message, previous);
  } catch (error) {
    if (error instanceof RangeError) return false;
    throw error;
  }
}

/**
 * Equal as parsed JSON, key order included (the key serializes the storable form in the
 * message's own key order, so two messages differing only in order may key differently).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i += 1) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  for (let i = 0; i < aKeys.length; i += 1) {
    const key = aKeys[i] as string;
    if (key !== bKeys[i] || !sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}
