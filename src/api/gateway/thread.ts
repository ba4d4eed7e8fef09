import type { Db } from '../../db/client.js';
import type { ConversationRow } from '../../db/repos/conversations.js';
import { historyKey, storableMessage } from './history.js';
import { type ConversationIdentity, threadId } from './identity.js';
import { ensureConversation, getConversation, storedKeysOf } from './store.js';
import type { GatewayWire } from './wire.js';

/** The key of a history's first message: the thread it belongs to under its conversation id. */
export function firstKeyOf(provider: GatewayWire, history: readonly unknown[]): string | null {
  return history.length === 0 ? null : historyKey(0, storableMessage(provider, history[0]));
}

/**
 * The conversation a request's history belongs to, created on first sight. Under one id
 * (identity.ts) a client may send histories that share not even their first message: Claude
 * Code run interactively sends side requests (a session title, a summary) with the main loop's
 * session and user ids. The first history stored under the id keeps it; a history whose first
 * message differs is a thread of its own (`<id>.t-<hash of that message>`), linked to it and
 * with its settings, so no history takes another's place. A side request (identity.ts
 * `sideRequest`) never takes an id that has no history yet: it is sent beside the main loop's
 * first request, and the id would go to whichever is stored first. A sub-agent's conversation
 * is linked to its parent's.
 */
export async function conversationOf(
  db: Db,
  tenantId: string,
  identity: ConversationIdentity,
  firstKey: string | null,
  model: unknown,
): Promise<ConversationRow> {
  // the parent is read only when the conversation is created (its settings are inherited then)
  const existing = await getConversation(db, tenantId, identity.id);
  const parent = existing || identity.parentId === undefined ? null : await getConversation(db, tenantId, identity.parentId);
  const base =
    existing ??
    (await ensureConversation(db, tenantId, identity.id, {
      model,
      ...(parent ? { parent: { conversation: parent, relation: 'agent' } } : {}),
    }));
  if (await keepsTheId(db, base, identity, firstKey)) return base;
  return ensureConversation(db, tenantId, threadId(identity.id, firstKey as string), {
    model,
    parent: { conversation: base, relation: 'thread' },
  });
}

/** `conversationOf` without creating anything (count_tokens stores nothing): null when the history's conversation does not exist yet. */
export async function existingConversationOf(
  db: Db,
  tenantId: string,
  identity: ConversationIdentity,
  firstKey: string | null,
): Promise<ConversationRow | null> {
  const base = await getConversation(db, tenantId, identity.id);
  if (!base || (await keepsTheId(db, base, identity, firstKey))) return base;
  return getConversation(db, tenantId, threadId(identity.id, firstKey as string));
}

/** Whether a history starting with `firstKey` is the one stored under the id (or may take an id that holds none yet). */
async function keepsTheId(db: Db, base: ConversationRow, identity: ConversationIdentity, firstKey: string | null): Promise<boolean> {
  if (firstKey === null) return true;
  const first = (await storedKeysOf(db, base)).keys.get(0);
  return first === firstKey || (first === undefined && identity.sideRequest !== true);
}
