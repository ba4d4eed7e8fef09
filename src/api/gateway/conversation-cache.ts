import type { StoredKeys } from '../../db/repos/gateway-history.js';
import type { ActiveRow } from './upstream-body.js';

/**
 * What the gateway read of recently seen conversations, each valid for one `version` of the
 * conversation row. Every change to a conversation's messages bumps it (an append, a
 * compaction's commit, a consolidation, a revert), so a cached entry is used only while the
 * row still has its version; the gateway's own appends carry an entry forward (the rows they
 * add are known). A long session then costs no read of its ~1 000 keys or rows per turn.
 * Per process; past this many conversations the least recently used is read again.
 */
const MAX_CONVERSATIONS = 1_000;

export interface CachedConversation {
  version: number;
  /** the keys of every message the gateway stored (active or compacted) */
  stored: StoredKeys;
  /** the active history, when read (null: not read at this version) */
  rows: ActiveRow[] | null;
}

const cache = new Map<string, CachedConversation>();

export function cachedAt(conversationId: string, version: number): CachedConversation | null {
  const entry = cache.get(conversationId);
  if (!entry || entry.version !== version) return null;
  cache.delete(conversationId);
  cache.set(conversationId, entry);
  return entry;
}

export function remember(conversationId: string, entry: CachedConversation): void {
  cache.delete(conversationId);
  cache.set(conversationId, entry);
  if (cache.size > MAX_CONVERSATIONS) cache.delete(cache.keys().next().value as string);
}
