import { and, eq, getTableColumns, inArray, isNull, sql } from 'drizzle-orm';

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

/** A batch without its ledger (SPEC §5.6b): what choosing, prompting and framing a merge read. */
export type BatchSummaryRow = Omit<BatchRow, 'ledger'>;

// A ledger is tens of KB per batch as JavaScript objects (a 1,000-batch merge read ~45 MB of
// them at once, its peak); only the merge of the ledgers reads them, a page at a time.
const { ledger: _ledger, ...summaryColumns } = getTableColumns(batches);

/** Live batches without their ledgers, oldest first (`loadLiveBatches` without the ledger column). */
export async function loadLiveBatchSummaries(db: DbOrTx, conversationId: string): Promise<BatchSummaryRow[]> {
  return db
    .select(summaryColumns)
    .from(batches)
    .where(and(eq(batches.conversationId, conversationId), isNull(batches.supersededBy)))
    .orderBy(chronological);
}

/** Batches by id without their ledgers, oldest first. */
export async function loadBatchSummariesByIds(db: DbOrTx, ids: readonly string[]): Promise<BatchSummaryRow[]> {
  if (ids.length === 0) return [];
  return db
    .select(summaryColumns)
    .from(batches)
    .where(inArray(batches.id, [...ids]))
    .orderBy(chronological);
}

/** The stored ledgers of the batches `ids` (validated; null when absent or not one), by id. */
export async function loadBatchLedgers(db: DbOrTx, ids: readonly string[]): Promise<Map<string, Ledger | null>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: batches.id, ledger: batches.ledger })
    .from(batches)
    .where(inArray(batches.id, [...ids]));
  return new Map(rows.map((row) => [row.id, storedLedger(row.ledger)]));
}
