import { inArray, type SQL, sql } from 'drizzle-orm';

import type { Block, Role } from '../../compaction/types.js';
import type { DbOrTx } from '../client.js';
import { type ArchiveReason, batches, conversations, messages } from '../schema.js';

/**
 * The set-based writes of finalize's single transaction (SPEC §5.5). Arrays go to Postgres
 * as one parameter each (`= any($1)`, `unnest($1, $2)`), never expanded into lists.
 */

const bigints = (values: readonly number[]) => sql`${sql.param(values.map(String))}::bigint[]`;
const uuids = (values: ReadonlyArray<string | null>) => sql`${sql.param(values)}::uuid[]`;

/**
 * Active totals, how many of `seqs` are active right now and how many of those are pinned,
 * in one scan (counts: the seqs never come back).
 */
export async function activeTotalsWith(
  db: DbOrTx,
  conversationId: string,
  seqs: readonly number[],
): Promise<{ tokens: number; messages: number; active: number; pinned: number }> {
  const [row] = await db.execute<{ tokens: number; messages: number; active: number; pinned: number }>(sql`
    select coalesce(sum(tokens), 0)::int as tokens, count(*)::int as messages, (count(*) filter (where seq = any(${bigints(seqs)})))::int as active,
           (count(*) filter (where pinned and seq = any(${bigints(seqs)})))::int as pinned
      from ${messages} where conversation_id = ${conversationId}`);
  return { tokens: row?.tokens ?? 0, messages: row?.messages ?? 0, active: row?.active ?? 0, pinned: row?.pinned ?? 0 };
}

export type NewBatch = typeof batches.$inferInsert;

/** A batch whose ledger is copied in SQL (`chunkLedgerSql`), never read into the worker. */
export type NewBatchWithLedgerSql = Omit<NewBatch, 'ledger'> & { ledger: SQL };

export async function insertBatches(db: DbOrTx, rows: ReadonlyArray<NewBatch | NewBatchWithLedgerSql>): Promise<Array<{ id: string }>> {
  if (rows.length === 0) return [];
  return db
    .insert(batches)
    .values([...rows])
    .returning({ id: batches.id });
}

export async function supersedeBatches(db: DbOrTx, ids: readonly string[], supersededBy: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .update(batches)
    .set({ supersededBy })
    .where(inArray(batches.id, [...ids]));
}

/**
 * Copies active rows into the archive (with their batch, job and reason). With
 * `remove`, they leave the active history; without, the caller rewrites them in place.
 */
export async function archiveMessages(
  db: DbOrTx,
  params: {
    conversationId: string;
    /** null only for `rewound` originals, which no job archives */
    jobId: string | null;
    reason: ArchiveReason;
    seqs: readonly number[];
    /** batch per seq (same order), or null */
    batchIds?: ReadonlyArray<string | null>;
    remove: boolean;
  },
): Promise<number> {
  if (params.seqs.length === 0) return 0;
  const batchIds = params.batchIds ?? params.seqs.map(() => null);
  const inserted = await db.execute(sql`
    insert into archived_messages
      (id, conversation_id, seq, role, kind, content, name, tokens, tool_use_ids, tool_result_ids, usage, metadata, created_at, batch_id, job_id, reason)
    select m.id, m.conversation_id, m.seq, m.role, m.kind, m.content, m.name, m.tokens, m.tool_use_ids, m.tool_result_ids,
           m.usage, m.metadata, m.created_at, b.batch_id, ${params.jobId}, ${params.reason}
      from ${messages} m
      join unnest(${bigints(params.seqs)}, ${uuids(batchIds)}) as b(seq, batch_id) on b.seq = m.seq
     where m.conversation_id = ${params.conversationId}`);
  if (params.remove) {
    await db.execute(sql`delete from ${messages} where conversation_id = ${params.conversationId} and seq = any(${bigints(params.seqs)})`);
  }
  return inserted.count;
}

const ints = (values: readonly number[]) => sql`${sql.param(values.map(String))}::int[]`;

/**
 * Values as their distinct list and each one's 1-based position in it (a null is its own
 * entry): a commit of 100,000 summarized messages sends 1,000 batch ids and 100,000 small
 * numbers instead of 100,000 ids and reasons spelled out, a few MB less to serialize.
 */
function ordinals<T extends string | null>(values: readonly T[]): { values: T[]; ordinals: number[] } {
  const position = new Map<T, number>();
  const distinct: T[] = [];
  const ordinals = values.map((value) => {
    let at = position.get(value);
    if (at === undefined) {
      distinct.push(value);
      at = distinct.length;
      position.set(value, at);
    }
    return at;
  });
  return { values: distinct, ordinals };
}

export interface ArchiveMove {
  conversationId: string;
  jobId: string;
  /** seqs to copy into the archive, each with its reason and batch (null unless summarized) */
  seqs: readonly number[];
  reasons: readonly ArchiveReason[];
  batchIds: ReadonlyArray<string | null>;
  /** seqs (among `seqs`) that leave the active history */
  remove: readonly number[];
  /** kept messages whose content is replaced (Tier 1/2); their originals are among `seqs` */
  rewrites: ReadonlyArray<{ seq: number; content: Block[]; tokens: number }>;
}

/**
 * A compaction's whole archive move as ONE statement: the originals are copied into the
 * archive (INSERT … SELECT, the content never leaves Postgres), the summarized ones and the
 * superseded clip-archive are deleted, the rewritten ones get their new content. Every part
 * reads the same snapshot, so the copies are the rows as they were before the statement.
 */
export async function moveToArchive(db: DbOrTx, move: ArchiveMove): Promise<void> {
  if (move.seqs.length === 0) return;
  const rewrites = JSON.stringify(move.rewrites.map((r) => ({ seq: r.seq, content: r.content, tokens: r.tokens })));
  const batchIds = ordinals(move.batchIds);
  const reasons = ordinals(move.reasons);
  await db.execute(sql`
    with archived as (
      insert into archived_messages
        (id, conversation_id, seq, role, kind, content, name, tokens, tool_use_ids, tool_result_ids, usage, metadata, created_at, batch_id, job_id, reason)
      select m.id, m.conversation_id, m.seq, m.role, m.kind, m.content, m.name, m.tokens, m.tool_use_ids, m.tool_result_ids,
             m.usage, m.metadata, m.created_at, (${uuids(batchIds.values)})[b.batch], ${move.jobId}, (${sql.param(reasons.values)}::text[])[b.reason]
        from ${messages} m
        join unnest(${bigints(move.seqs)}, ${ints(batchIds.ordinals)}, ${ints(reasons.ordinals)}) as b(seq, batch, reason) on b.seq = m.seq
       where m.conversation_id = ${move.conversationId}
      returning 1),
    removed as (
      delete from ${messages} where conversation_id = ${move.conversationId} and seq = any(${bigints(move.remove)})
      returning 1),
    rewritten as (
      update ${messages} m set content = r.content, tokens = r.tokens
        from jsonb_to_recordset(${rewrites}::jsonb) as r(seq bigint, content jsonb, tokens int)
       where m.conversation_id = ${move.conversationId} and m.seq = r.seq
      returning 1)
    select (select count(*) from archived) as archived, (select count(*) from removed) as removed, (select count(*) from rewritten) as rewritten`);
}

export async function insertClipArchiveMessage(
  db: DbOrTx,
  params: { conversationId: string; seq: number; role: Role; content: Block[]; tokens: number; metadata?: Record<string, unknown> },
): Promise<string> {
  const [row] = await db
    .insert(messages)
    .values({ ...params, kind: 'clip_archive', toolUseIds: [], toolResultIds: [] })
    .returning({ id: messages.id });
  if (!row) throw new Error('clip-archive insert returned nothing');
  return row.id;
}

/** Distinct seqs of the conversation that live in the archive as originals (not clip-archives). */
export async function countArchivedOriginals(db: DbOrTx, conversationId: string): Promise<number> {
  const [row] = await db.execute<{ n: number }>(sql`
    select count(distinct seq)::int as n from archived_messages
     where conversation_id = ${conversationId} and reason <> 'superseded_clip'`);
  return row?.n ?? 0;
}

/** Active token and message totals, recomputed from the rows (exact after any rewrite). */
export async function activeTotals(db: DbOrTx, conversationId: string): Promise<{ tokens: number; messages: number }> {
  const [row] = await db.execute<{ tokens: number; messages: number }>(sql`
    select coalesce(sum(tokens), 0)::int as tokens, count(*)::int as messages from ${messages} where conversation_id = ${conversationId}`);
  return { tokens: row?.tokens ?? 0, messages: row?.messages ?? 0 };
}

/**
 * Records a compaction on the conversation with its totals recomputed from the rows (exact
 * after any rewrite) in the same statement, and returns them. The caller may still roll the
 * transaction back when the totals show too little progress.
 */
export async function recordCompaction(
  db: DbOrTx,
  params: { conversationId: string; jobId: string; watermark: number; warnRatio: number },
): Promise<{ tokens: number; messages: number; warning: boolean }> {
  const [row] = await db.execute<{ tokens: number; messages: number; warning: boolean }>(sql`
    with totals as (
      select coalesce(sum(tokens), 0)::int as tokens, count(*)::int as messages from ${messages} where conversation_id = ${params.conversationId})
    update ${conversations} c set
      active_tokens = totals.tokens,
      message_count = totals.messages,
      compaction_count = c.compaction_count + 1,
      -- the provider's last reported usage described the history before this compaction
      reported_input_tokens = null,
      last_compacted_seq = ${params.watermark},
      auto_paused_until_seq = null,
      warning = totals.tokens >= ${params.warnRatio}::float8 * c.context_limit,
      last_job_id = ${params.jobId},
      version = c.version + 1,
      updated_at = now()
      from totals
     where c.id = ${params.conversationId}
    returning c.active_tokens as tokens, c.message_count as messages, c.warning`);
  if (!row) throw new Error(`conversation ${params.conversationId} vanished during commit`);
  return row;
}
