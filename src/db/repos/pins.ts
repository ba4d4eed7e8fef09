import { and, eq, sql } from 'drizzle-orm';

import type { DbOrTx } from '../client.js';
import { archivedMessages, messages } from '../schema.js';
import type { MessageRow } from './messages.js';

/**
 * Pins of the active history (SPEC §5.6a). The caller holds the conversation lock, the one
 * finalize's commit takes: a pin lands either before a commit (which then sees it and refuses
 * to archive the message) or after it (when the message is already archived).
 */

export type PinOutcome =
  | { kind: 'set'; message: MessageRow }
  /** the seq names an archived original, not an active message */
  | { kind: 'archived' }
  /** the clip-archive is replaced by every compaction: it cannot be kept */
  | { kind: 'clip_archive' }
  | { kind: 'missing' };

/** Sets or clears the pin of the active message at `seq`. */
export async function setPinned(db: DbOrTx, conversationId: string, seq: number, pinned: boolean): Promise<PinOutcome> {
  const [updated] = await db
    .update(messages)
    .set({ pinned })
    .where(and(eq(messages.conversationId, conversationId), eq(messages.seq, seq), eq(messages.kind, 'message')))
    .returning();
  if (updated) return { kind: 'set', message: updated };
  const [found] = await db.execute<{ active: boolean; archived: boolean }>(sql`
    select exists (select 1 from ${messages} where conversation_id = ${conversationId} and seq = ${seq}) as active,
           exists (select 1 from ${archivedMessages} where conversation_id = ${conversationId} and seq = ${seq}) as archived`);
  if (found?.active) return { kind: 'clip_archive' };
  return found?.archived ? { kind: 'archived' } : { kind: 'missing' };
}
