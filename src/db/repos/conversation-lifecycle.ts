import { and, eq, sql } from 'drizzle-orm';

import type { DbOrTx, Tx } from '../client.js';
import { lockArchiveForRemoval, withConversationLock } from '../locks.js';
import { conversations, idempotencyKeys } from '../schema.js';
import type { ConversationRow } from './conversations.js';

/**
 * Changing and erasing a conversation (PATCH / DELETE /v1/conversations/:id). Both run in the
 * caller's transaction after `lockConversation`, which serializes them with appends and with
 * finalize (same advisory lock) and with job inserts (the row lock blocks their foreign-key check).
 */

/**
 * Takes the conversation lock and the row lock, in the order appends and finalize take
 * theirs (advisory first), and returns the row as it is now; null when it does not exist.
 */
export async function lockConversation(tx: Tx, tenantId: string, externalId: string): Promise<ConversationRow | null> {
  const [found] = await tx
    .select({ id: conversations.id })
    .from(conversations)
    .where(and(eq(conversations.tenantId, tenantId), eq(conversations.externalId, externalId)));
  if (!found) return null;
  await withConversationLock(tx, found.id);
  const [row] = await tx.select().from(conversations).where(eq(conversations.id, found.id)).for('update');
  return row ?? null;
}

export interface ConversationChanges {
  model?: string | null;
  contextLimit?: number;
  policy?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

export async function updateConversation(db: DbOrTx, id: string, changes: ConversationChanges): Promise<ConversationRow> {
  const [row] = await db
    .update(conversations)
    .set({ ...changes, version: sql`${conversations.version} + 1`, updatedAt: sql`now()` })
    .where(eq(conversations.id, id))
    .returning();
  if (!row) throw new Error(`conversation ${id} vanished under its lock`);
  return row;
}

/**
 * Erases a conversation and everything that belongs to it. The active and archived messages
 * (and with them the archive's recall and search index), batches, compaction jobs,
 * their chunk rows, webhook endpoints and deliveries all reference the conversation with
 * ON DELETE CASCADE, so deleting the row removes them in the same statement. Idempotency
 * records carry no foreign key: they are found by the routes they were stored under, which
 * name the conversation's id, so a re-created conversation of the same id never replays them.
 */
export async function eraseConversation(tx: Tx, row: Pick<ConversationRow, 'id' | 'tenantId' | 'externalId'>): Promise<void> {
  const routePrefix = `POST /v1/conversations/${row.externalId}/`;
  await tx.delete(idempotencyKeys).where(
    and(
      eq(idempotencyKeys.tenantId, row.tenantId),
      sql`(starts_with(${idempotencyKeys.route}, ${routePrefix})
          or (${idempotencyKeys.route} = 'POST /v1/conversations' and ${idempotencyKeys.response} ->> 'id' = ${row.externalId}))`,
    ),
  );
  // the cascade deletes the archive: not while a recall indexer pass holds it (db/locks.ts)
  await lockArchiveForRemoval(tx, row.id);
  await tx.delete(conversations).where(eq(conversations.id, row.id));
}
