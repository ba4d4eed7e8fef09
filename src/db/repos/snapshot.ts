import { and, eq, inArray, isNull, sql } from 'drizzle-orm';

import { type Ledger, LedgerSchema } from '../../compaction/ledger/index.js';
import type { LiveBatch } from '../../compaction/plan-types.js';
import type { HistoryMessage } from '../../compaction/types.js';
import type { DbOrTx } from '../client.js';
import { batches, type messages } from '../schema.js';
import { batchSortKey } from './batches.js';

type MessageRow = typeof messages.$inferSelect;

export function toHistoryMessage(
  row: Pick<MessageRow, 'seq' | 'role' | 'kind' | 'content' | 'tokens' | 'toolUseIds' | 'toolResultIds'> &
    Partial<Pick<MessageRow, 'metadata'>>,
): HistoryMessage {
  const message: HistoryMessage = {
    seq: row.seq,
    role: row.role,
    kind: row.kind,
    content: row.content,
    tokens: row.tokens,
    toolUseIds: row.toolUseIds,
    toolResultIds: row.toolResultIds,
  };
  // a meta turn (meta-turns.ts) is rendered to the summarizer as such
  const meta = row.metadata?.['meta'];
  return row.role === 'user' && typeof meta === 'boolean' ? { ...message, meta } : message;
}

type BatchRow = typeof batches.$inferSelect;

/** A live batch; its ledger is validated on first read (the plan step never reads it, the commit does). */
export function toLiveBatch(row: BatchRow): LiveBatch {
  let ledger: Ledger | null | undefined;
  return {
    id: row.id,
    level: row.level,
    summary: row.summary,
    seqs: row.seqs,
    summaryTokens: row.summaryTokens,
    get ledger() {
      if (ledger === undefined) ledger = storedLedger(row.ledger);
      return ledger;
    },
  };
}

/** A stored ledger, validated (SPEC §5.6b: typed, zod-validated); null when absent or not one. */
export function storedLedger(value: unknown): Ledger | null {
  if (value === null || value === undefined) return null;
  const parsed = LedgerSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** Batches oldest first (`batchSortKey`): the clip-archive, the consolidation's choice and its merged ledger depend on it. */
const chronological = sql`${batchSortKey('batches')}`;

/** Live (not superseded) batches of the conversation: what its clip-archive carries, oldest first. */
export async function loadLiveBatches(db: DbOrTx, conversationId: string): Promise<BatchRow[]> {
  return db
    .select()
    .from(batches)
    .where(and(eq(batches.conversationId, conversationId), isNull(batches.supersededBy)))
    .orderBy(chronological);
}

export async function loadBatchesByIds(db: DbOrTx, ids: readonly string[]): Promise<BatchRow[]> {
  if (ids.length === 0) return [];
  return db
    .select()
    .from(batches)
    .where(inArray(batches.id, [...ids]))
    .orderBy(chronological);
}
