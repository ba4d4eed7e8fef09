import type { StoredKeys } from '../../db/repos/gateway-history.js';
import type { GatewayWire } from './wire.js';

/**
 * The providers' own compaction, passed through (docs/gateway.md "Provider compaction"). A
 * request that asks a provider to compact — Anthropic's on-demand `compaction` parameter or
 * a `compact_20260112` edit in `context_management` (threshold mode), a Responses `compaction_trigger` item — goes upstream
 * untouched: the provider summarizes what the agent sent, not compactd's context. What comes
 * back (an Anthropic `compaction` block, an OpenAI/xAI `compaction` item) is the conversation's
 * new start: the *provider clip*. compactd stores it pinned, so its own compactions only ever
 * cover what follows it, and the stored turns before it leave the active history (archived as
 * `rewound`: the client no longer sends them). A later request that carries the item is matched
 * against the stored history from the item on; what the client sends before it (the kept user
 * messages of a `/responses/compact` output) is forwarded as sent and not stored again.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Metadata key of a stored message that is a provider's compaction: `{provider, item}`, the block or item as the provider returned it. */
export const PROVIDER_COMPACTION_KEY = 'providerCompaction';

/** The Responses item types of a provider's compaction (`compaction_summary`: Codex's earlier name). */
export const RESPONSES_COMPACTION_TYPES: ReadonlySet<string> = new Set(['compaction', 'compaction_summary']);

/** A Responses input item's type: `message` when it only has a role (the SDKs' short form). */
export function itemType(item: unknown): string {
  if (!isObject(item)) return 'message';
  const type = item['type'];
  return typeof type === 'string' ? type : 'message';
}

/** Why a request goes upstream as the client sent it, when it asks for something only the provider can do. */
export type ProviderOnlyReason = 'provider-compaction' | 'previous-response-id';

/**
 * `previous-response-id`: the history is kept by the provider (`previous_response_id`, or an
 * `item_reference` to a stored item): the gateway sees only the new items, so it neither stores
 * nor rebuilds anything. `provider-compaction`: the request asks the provider to compact.
 */
export function providerOnlyReason(wire: GatewayWire, body: Json, items: readonly unknown[]): ProviderOnlyReason | null {
  if (wire === 'responses') {
    const previous = body['previous_response_id'];
    if ((previous !== undefined && previous !== null) || items.some((item) => itemType(item) === 'item_reference'))
      return 'previous-response-id';
    if (items.some((item) => itemType(item) === 'compaction_trigger')) return 'provider-compaction';
  }
  const compaction = body['compaction'];
  if (compaction !== undefined && compaction !== null) return 'provider-compaction';
  // context_management also carries edits that only clear old tool results or thinking (Claude
  // Code sends them on every request): only a compaction edit (`compact_20260112`) is the provider's compaction
  return compactionEdits(body['context_management']) ? 'provider-compaction' : null;
}

function compactionEdits(management: unknown): boolean {
  if (!isObject(management)) return false;
  const edits = management['edits'];
  return (
    Array.isArray(edits) && edits.some((edit) => isObject(edit) && typeof edit['type'] === 'string' && edit['type'].startsWith('compact'))
  );
}

/** Whether one history element is (Responses) or carries (Anthropic: a compaction block with its summary) a provider's compaction. */
export function isProviderClip(wire: GatewayWire, element: unknown): boolean {
  if (!isObject(element)) return false;
  if (wire === 'responses') return RESPONSES_COMPACTION_TYPES.has(itemType(element));
  if (wire !== 'anthropic' || !Array.isArray(element['content'])) return false;
  // a block whose content is null is a compaction that failed: it stands for nothing
  return element['content'].some((block) => isObject(block) && block['type'] === 'compaction' && typeof block['content'] === 'string');
}

/** The index of the last provider clip of a history, or null. */
export function lastProviderClip(wire: GatewayWire, history: readonly unknown[]): number | null {
  for (let index = history.length - 1; index >= 0; index -= 1) if (isProviderClip(wire, history[index])) return index;
  return null;
}

/** The key of a stored position the provider's compaction took out of the active history (rewound: no key left). */
const clippedKey = (position: number) => `m${position}-provider-clip`;

/** The hash part of a history key (`m<position>-<hash>`). */
const hashOf = (key: string) => key.slice(key.indexOf('-') + 1);

/**
 * Where the stored history holds the clip keyed `clipKey` (computed at any position): the last
 * position whose key has the same content, or the stored length when it holds none (the item
 * is new to compactd, e.g. from a `/responses/compact` call: it is appended there).
 */
export function clipPosition(stored: StoredKeys, clipKey: string): number {
  const hash = hashOf(clipKey);
  let found = -1;
  let length = 0;
  for (const [position, key] of stored.keys) {
    length = Math.max(length, position + 1);
    if (hashOf(key) === hash && position > found) found = position;
  }
  return found >= 0 ? found : length;
}

/**
 * The stored keys as a history that starts with a provider clip at `clipAt` compares them:
 * every position before the clip reads as clipped, on both sides (`clipAlignedKeys`). What lies
 * there is the provider's to remember — turns the clip archived, or, for a clip compactd has
 * not seen yet, turns it will archive when it stores the clip — so it never decides a plan.
 */
export function withProviderClip(stored: StoredKeys, clipAt: number | undefined): StoredKeys {
  if (clipAt === undefined) return stored;
  const keys = new Map(stored.keys);
  for (let position = 0; position < clipAt; position += 1) keys.set(position, clippedKey(position));
  return { keys, activeFrom: stored.activeFrom };
}

/** The client's keys for a history whose clip sits at `clipAt`: clipped positions before it, then its own from the clip on. */
export function clipAlignedKeys(clipAt: number, ownKeys: readonly string[]): string[] {
  return [...Array.from({ length: clipAt }, (_, position) => clippedKey(position)), ...ownKeys];
}
