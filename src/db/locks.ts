import { sql } from 'drizzle-orm';
import type { Tx } from './client.js';

/**
 * Per-conversation transaction lock (SPEC §5.5). Appends take it only to assign seqs, and
 * finalize takes it for its one commit transaction, so an append waits milliseconds at most,
 * never for an LLM call. Released automatically at commit/rollback.
 */
export async function withConversationLock(tx: Tx, conversationId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${conversationId}, 0))`);
}
