import { and, eq, getTableColumns, isNotNull, isNull, type SQL, sql } from 'drizzle-orm';

import type { DbOrTx } from '../client.js';
import { batches, conversations } from '../schema.js';

export type BatchRow = typeof batches.$inferSelect;
export type BatchWithConversation = BatchRow & { conversationExternalId: string };

/** A batch of one of the tenant's conversations (another tenant's batch reads as absent). */
export async function getBatchForTenant(db: DbOrTx, tenantId: string, id: string): Promise<BatchWithConversation | null> {
  const [row] = await db
    .select({ ...getTableColumns(batches), conversationExternalId: conversations.externalId })
    .from(batches)
    .innerJoin(conversations, eq(conversations.id, batches.conversationId))
    .where(and(eq(batches.id, id), eq(conversations.tenantId, tenantId)));
  return row ?? null;
}

export async function batchBelongsTo(db: DbOrTx, conversationId: string, id: string): Promise<boolean> {
  const [row] = await db
    .select({ id: batches.id })
    .from(batches)
    .where(and(eq(batches.id, id), eq(batches.conversationId, conversationId)));
  return row !== undefined;
}

export interface ListBatchesParams {
  level?: number;
  /** true: only batches not absorbed by a re-summary; false: only absorbed ones */
  live?: boolean;
  /** id of the last batch of the previous page */
  after?: string;
  limit: number;
}

/**
 * Order of batches wherever they are read: creation, then the first seq covered (the chunks
 * of one compaction share a creation time, and Postgres returns ties in any order), then id.
 * The list's cursor is a batch id whose sort key is looked up in SQL, so it survives
 * timestamps finer than JavaScript's milliseconds.
 */
export const batchSortKey = (alias: string) => sql.raw(`${alias}.created_at, coalesce(${alias}.seqs[1], 0), ${alias}.id`);

/** The conversation's batches, oldest first, keyset-paginated. */
export async function listBatches(db: DbOrTx, conversationId: string, params: ListBatchesParams): Promise<BatchRow[]> {
  const conditions: SQL[] = [eq(batches.conversationId, conversationId)];
  if (params.level !== undefined) conditions.push(eq(batches.level, params.level));
  if (params.live !== undefined) conditions.push(params.live ? isNull(batches.supersededBy) : isNotNull(batches.supersededBy));
  if (params.after !== undefined) {
    conditions.push(sql`(${batchSortKey('batches')}) > (select ${batchSortKey('c')} from batches c where c.id = ${params.after})`);
  }
  return db
    .select()
    .from(batches)
    .where(and(...conditions))
    .orderBy(sql`${batchSortKey('batches')}`)
    .limit(params.limit);
}
