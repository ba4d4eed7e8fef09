import { inArray, type SQL, sql } from 'drizzle-orm';

import type { Block, Role } from '../../compaction/types.js';
import type { DbOrTx } from '../client.js';
import { type ArchiveReason, batches, compactionChunks, conversations, messages } from '../schema.js';

/**
 * The set-based writes of finalize's single transaction (SPEC §5.5). Arrays go to Postgres
 * as one parameter each (`= any($1)`, `unnest($1, $2)`), never expanded into lists.
 */

const bigints = (values: readonly number[]) => sql`${sql.param(values.map(String))}::bigint[]`;
const uuids = (values: ReadonlyArray<string | null>) => sql`${sql.param(values)}::uuid[]`;

/**
 * The active message at `seq` of a conversation, as a LATERAL subquery: one index probe per
 * seq, whatever the planner believes. A plain join is not safe here: right after a
 * conversation grows, Postgres's statistics put it at about one row, and the planner then nests
 * a loop that re-reads the whole seq list for each of its messages (a 10,000-message commit
 * spent 5 s in `activeTotalsForCommit` that way instead of ~20 ms). OFFSET 0 keeps the
 * subquery from being flattened back into that join.
 */
const activeAt = (conversationId: string, seq: SQL) =>
  sql`lateral (select * from ${messages} m where m.conversation_id = ${conversationId} and m.seq = ${seq} offset 0)`;

/**
 * Active totals, how many of the messages a commit plans to move are active right now and
 * how many of those are pinned, in one scan: the job's chunks' seqs are read in Postgres,
 * `extraSeqs` (rewrites, the superseded clip-archive) are a few.
 */
export async function activeTotalsForCommit(
  db: DbOrTx,
  conversationId: string,
  jobId: string,
  extraSeqs: readonly number[],
): Promise<{ tokens: number; messages: number; active: number; pinned: number }> {
  const [row] = await db.execute<{ tokens: number; messages: number; active: number; pinned: number }>(
    activeTotalsForCommitSql(conversationId, jobId, extraSeqs),
  );
  return { tokens: row?.tokens ?? 0, messages: row?.messages ?? 0, active: row?.active ?? 0, pinned: row?.pinned ?? 0 };
}

/** `activeTotalsForCommit`'s statement (its plan is tested apart). */
export function activeTotalsForCommitSql(conversationId: string, jobId: string, extraSeqs: readonly number[]): SQL {
  return sql`
    with planned as (
      select unnest(c.seqs) as seq from ${compactionChunks} c where c.job_id = ${jobId}
      union all select unnest(${bigints(extraSeqs)})),
    touched as (select m.pinned from planned p cross join ${activeAt(conversationId, sql`p.seq`)} m)
    select coalesce(sum(tokens), 0)::int as tokens, count(*)::int as messages,
           (select count(*) from touched)::int as active, (select count(*) filter (where pinned) from touched)::int as pinned
      from ${messages} where conversation_id = ${conversationId}`;
}

export type NewBatch = typeof batches.$inferInsert;

/** A batch whose ledger and seqs are copied from its chunk in SQL (`chunkCopySql`), never read into the worker. */
export type NewBatchFromChunk = Omit<NewBatch, 'ledger' | 'seqs'> & { ledger: SQL; seqs: SQL };

export async function insertBatches(db: DbOrTx, rows: ReadonlyArray<NewBatch | NewBatchFromChunk>): Promise<Array<{ id: string }>> {
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
      from unnest(${bigints(params.seqs)}, ${uuids(batchIds)}) as b(seq, batch_id)
     cross join ${activeAt(params.conversationId, sql`b.seq`)} m`);
  if (params.remove) {
    await db.execute(sql`delete from ${messages} where conversation_id = ${params.conversationId} and seq = any(${bigints(params.seqs)})`);
  }
  return inserted.count;
}

export interface ArchiveMove {
  conversationId: string;
  /** the committing job: every seq of its level-0 batches (inserted just before) is summarized */
  jobId: string;
  /** kept messages whose content is replaced (Tier 1/2), each original archived with its reason */
  rewrites: ReadonlyArray<{ seq: number; reason: ArchiveReason; content: Block[]; tokens: number }>;
  /** the clip-archive the new one supersedes: archived and removed */
  supersededClipSeq: number | null;
}

/**
 * A compaction's whole archive move as ONE statement: the originals are copied into the
 * archive (INSERT … SELECT, the content never leaves Postgres), the summarized ones and the
 * superseded clip-archive are deleted, the rewritten ones get their new content. Every part
 * reads the same snapshot, so the copies are the rows as they were before the statement.
 * Which seqs are summarized, and into which batch, is read from the job's batches in
 * Postgres: a commit of 100,000 messages sends no per-message parameter.
 */
export async function moveToArchive(db: DbOrTx, move: ArchiveMove): Promise<void> {
  await db.execute(moveToArchiveSql(move));
}

/**
 * `moveToArchive`'s statement (its plan is tested apart). Each moving seq finds its row with
 * `activeAt`; the delete and the update then reach those rows by primary key, a join whose
 * other side is the whole table, which the planner never takes for one row.
 */
export function moveToArchiveSql(move: ArchiveMove): SQL {
  const rewrites = JSON.stringify(move.rewrites.map((r) => ({ seq: r.seq, reason: r.reason, content: r.content, tokens: r.tokens })));
  return sql`
    with rewrites as (
      select r.seq, r.reason, r.content, r.tokens from jsonb_to_recordset(${rewrites}::jsonb) as r(seq bigint, reason text, content jsonb, tokens int)),
    moving as (
      select s.seq, b.id as batch_id, 'summarized' as reason
        from ${batches} b cross join unnest(b.seqs) as s(seq)
       where b.job_id = ${move.jobId} and b.level = 0
      union all select seq, null, reason from rewrites
      union all select ${move.supersededClipSeq}::bigint, null, 'superseded_clip' where ${move.supersededClipSeq}::bigint is not null),
    archived as (
      insert into archived_messages
        (id, conversation_id, seq, role, kind, content, name, tokens, tool_use_ids, tool_result_ids, usage, metadata, created_at, batch_id, job_id, reason)
      select m.id, m.conversation_id, m.seq, m.role, m.kind, m.content, m.name, m.tokens, m.tool_use_ids, m.tool_result_ids,
             m.usage, m.metadata, m.created_at, v.batch_id, ${move.jobId}, v.reason
        from moving v cross join ${activeAt(move.conversationId, sql`v.seq`)} m
      returning id, reason),
    removed as (
      delete from ${messages} m using archived a
       where m.id = a.id and a.reason in ('summarized', 'superseded_clip')
      returning 1),
    rewritten as (
      update ${messages} m set content = r.content, tokens = r.tokens
        from rewrites r cross join ${activeAt(move.conversationId, sql`r.seq`)} t
       where m.id = t.id
      returning 1)
    select (select count(*) from archived) as archived, (select count(*) from removed) as removed, (select count(*) from rewritten) as rewritten`;
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
