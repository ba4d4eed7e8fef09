import { sql } from 'drizzle-orm';

import type { Tx } from './client.js';
import { compiledStatement } from './prepared.js';

// taken on every append: compiled once (see compiledStatement)
const exclusiveLock = compiledStatement<Record<string, unknown>, { key: string }>(
  sql`select pg_advisory_xact_lock(hashtextextended(${sql.placeholder('key')}, 0))`,
);
const sharedLock = compiledStatement<Record<string, unknown>, { key: string }>(
  sql`select pg_advisory_xact_lock_shared(hashtextextended(${sql.placeholder('key')}, 0))`,
);

/**
 * Per-conversation transaction lock (SPEC §5.5). Appends take it only to assign seqs, and
 * finalize takes it for its one commit transaction, so an append waits milliseconds at most,
 * never for an LLM call. Released automatically at commit/rollback.
 */
export async function withConversationLock(tx: Tx, conversationId: string): Promise<void> {
  await exclusiveLock(tx, { key: conversationId });
}

/**
 * The conversation's archive, against its recall indexer (SPEC §5.9). An indexer pass writes
 * markers and pieces whose foreign-key checks lock the archived rows it indexes, in the order
 * of its plan (seq order over a populated archive); a revert or an erase deletes archived rows
 * in theirs (heap order through the job index, or the cascade's). Two orders over the same rows
 * can deadlock, and Postgres then rolls back either side (a revert answered 500). So they never
 * overlap: a pass holds this lock shared for its read and its write (passes run side by side),
 * and whatever deletes archived rows holds it exclusively, after the conversation lock. A pass
 * waits for the delete to commit and then sees the rows gone; a delete waits for at most one
 * pass (a bounded batch), never for the indexer's whole backlog. Its own key space, apart from
 * the conversation lock: appends never wait for an indexer.
 */
export async function lockArchiveForIndexing(tx: Tx, conversationId: string): Promise<void> {
  await sharedLock(tx, { key: archiveKey(conversationId) });
}

/** Exclusive side of `lockArchiveForIndexing`: taken by a transaction that deletes archived rows. */
export async function lockArchiveForRemoval(tx: Tx, conversationId: string): Promise<void> {
  await exclusiveLock(tx, { key: archiveKey(conversationId) });
}

const archiveKey = (conversationId: string) => `archive:${conversationId}`;
