import { and, asc, eq, getTableColumns, inArray, type SQL, sql } from 'drizzle-orm';

import type { Ledger } from '../../compaction/ledger/index.js';
import type { Block, HistoryMessage, MessageKind, ProviderCompaction, Role } from '../../compaction/types.js';
import type { DbOrTx } from '../client.js';
import { executePrepared, preparedPerHandle } from '../prepared.js';
import { type ChunkUsage, compactionChunks, compactionJobs, conversations } from '../schema.js';
import { toHistoryMessage } from './snapshot.js';

/**
 * The plan's chunks as rows (SPEC §5.4). A summarize step needs three statements: load its
 * row with what it needs of the job, (optionally) keep a draft, and complete the row with
 * the job's progress in the same statement.
 */

export type ChunkRow = typeof compactionChunks.$inferSelect;
export type NewChunk = typeof compactionChunks.$inferInsert;

export async function insertChunks(db: DbOrTx, rows: readonly NewChunk[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insert(compactionChunks)
    .values([...rows])
    .onConflictDoNothing();
}

export async function listChunks(db: DbOrTx, jobId: string): Promise<ChunkRow[]> {
  return db.select().from(compactionChunks).where(eq(compactionChunks.jobId, jobId)).orderBy(asc(compactionChunks.idx));
}

/** A chunk row without its ledger (SPEC §5.6b), which is tens of KB as objects. */
export type ChunkRowWithoutLedger = Omit<ChunkRow, 'ledger'>;

const { ledger: _ledger, ...withoutLedger } = getTableColumns(compactionChunks);

/**
 * The job's chunks without their ledgers, in idx order: what finalize reads of a thousand
 * chunks; the commit copies the ledgers into the batches in SQL and merges them a page at a
 * time (`loadChunkLedgers`).
 */
export async function listChunksWithoutLedger(db: DbOrTx, jobId: string): Promise<ChunkRowWithoutLedger[]> {
  return db.select(withoutLedger).from(compactionChunks).where(eq(compactionChunks.jobId, jobId)).orderBy(asc(compactionChunks.idx));
}

/** The stored ledgers of some of the job's chunks, by idx (null when a chunk has none). */
export async function loadChunkLedgers(db: DbOrTx, jobId: string, idxs: readonly number[]): Promise<Map<number, Ledger | null>> {
  if (idxs.length === 0) return new Map();
  const rows = await db
    .select({ idx: compactionChunks.idx, ledger: compactionChunks.ledger })
    .from(compactionChunks)
    .where(and(eq(compactionChunks.jobId, jobId), inArray(compactionChunks.idx, [...idxs])));
  return new Map(rows.map((row) => [row.idx, row.ledger]));
}

/**
 * A chunk's stored ledger and seqs as SQL, for the insert of its batch: copied inside Postgres,
 * never sent back (a thousand ledgers, 100,000 seqs at 100,000 messages).
 */
export function chunkCopySql(jobId: string, idx: number): { ledger: SQL; seqs: SQL } {
  return {
    ledger: sql`(select c.ledger from compaction_chunks c where c.job_id = ${jobId} and c.idx = ${idx})`,
    seqs: sql`(select c.seqs from compaction_chunks c where c.job_id = ${jobId} and c.idx = ${idx})`,
  };
}

/**
 * The plan's header and focus through one read of the plan: each `->>` on the column
 * decompresses the whole plan again (673 KB at 100,000 messages, read by each of 1,000 steps).
 */
const headerAndFocus = sql<{ header: string | null; focus: string | null }>`(
  select jsonb_build_object('header', r.header, 'focus', r.focus)
    from jsonb_to_record(${compactionJobs.plan}) as r(header text, focus text))`;

/**
 * One chunk with the job fields its step reads (status, frozen policy, options, header) and
 * the conversation's client id (for log lines), in one query.
 */
export async function loadChunkStep(db: DbOrTx, jobId: string, idx: number) {
  const row = await readChunkStep(db, jobId, idx);
  if (!row) return null;
  const { planHead, ...job } = row.job;
  return { chunk: row.chunk, job: { ...job, header: planHead?.header ?? null, focus: planHead?.focus ?? null } };
}

async function readChunkStep(db: DbOrTx, jobId: string, idx: number) {
  const [row] = await chunkStepQuery(db).execute({ jobId, idx });
  return row ?? null;
}

/** Read by every summarize step: built and prepared once per handle (see preparedPerHandle). */
const chunkStepQuery = preparedPerHandle((db) =>
  db
    .select({
      chunk: compactionChunks,
      job: {
        id: compactionJobs.id,
        status: compactionJobs.status,
        trigger: compactionJobs.trigger,
        tenantId: compactionJobs.tenantId,
        conversationId: compactionJobs.conversationId,
        options: compactionJobs.options,
        policy: compactionJobs.policy,
        createdAt: compactionJobs.createdAt,
        planHead: headerAndFocus,
        conversationExternalId: conversations.externalId,
      },
    })
    .from(compactionChunks)
    .innerJoin(compactionJobs, eq(compactionJobs.id, compactionChunks.jobId))
    .innerJoin(conversations, eq(conversations.id, compactionJobs.conversationId))
    .where(and(eq(compactionChunks.jobId, sql.placeholder('jobId')), eq(compactionChunks.idx, sql.placeholder('idx'))))
    .prepare('chunk_step'),
);
export type ChunkStep = NonNullable<Awaited<ReturnType<typeof loadChunkStep>>>;

type ChunkMessageRow = {
  seq: string;
  role: Role;
  kind: MessageKind;
  content: Block[];
  tokens: number;
  tool_use_ids: string[];
  tool_result_ids: string[];
  meta: unknown;
};

/**
 * A chunk's active messages in seq order, as its summarize step reads them: only what a
 * HistoryMessage holds (not usage, name, timestamps, the rest of the metadata). The seqs go
 * as one array parameter, so the statement is prepared once per connection whatever the
 * chunk's length (an expanded `in (…)` list is a new statement, parsed and planned, per length).
 */
export async function loadChunkMessages(db: DbOrTx, conversationId: string, seqs: readonly number[]): Promise<HistoryMessage[]> {
  if (seqs.length === 0) return [];
  const rows = await executePrepared<ChunkMessageRow>(
    db,
    sql`
    select seq, role, kind, content, tokens, tool_use_ids, tool_result_ids, metadata -> 'meta' as meta
      from messages
     where conversation_id = ${conversationId} and seq = any(${`{${seqs.join(',')}}`}::bigint[])
     order by seq`,
  );
  return rows.map((row) =>
    toHistoryMessage({
      seq: Number(row.seq),
      role: row.role,
      kind: row.kind,
      content: row.content,
      tokens: row.tokens,
      toolUseIds: row.tool_use_ids,
      toolResultIds: row.tool_result_ids,
      metadata: row.meta === null ? null : { meta: row.meta },
    }),
  );
}

export interface ChunkDraft {
  text: string;
  usage: ChunkUsage & { calls: number; costUsd: number; latencyMs: number };
}

/**
 * Strategy native: the provider's answer (its item and what it cost) kept on the pending chunk
 * as soon as it arrives, so a step that fails afterwards never pays for the call again.
 */
export async function saveNativeAnswer(
  db: DbOrTx,
  jobId: string,
  idx: number,
  answer: {
    provider: 'anthropic' | 'openai';
    model: string;
    beta: string | null;
    item: Record<string, unknown>;
    usage: ChunkUsage;
    latencyMs: number;
    costUsd?: number;
  },
): Promise<void> {
  await db
    .update(compactionChunks)
    .set({
      providerItem: { provider: answer.provider, model: answer.model, beta: answer.beta, item: answer.item },
      draftUsage: { ...answer.usage, calls: 1, costUsd: answer.costUsd ?? 0, latencyMs: Math.round(answer.latencyMs) },
      updatedAt: sql`now()`,
    })
    .where(and(eq(compactionChunks.jobId, jobId), eq(compactionChunks.idx, idx), eq(compactionChunks.status, 'pending')));
}

/** Keeps a provider's first answer before an optional repair call, so a crash never pays for it twice. */
export async function saveChunkDraft(db: DbOrTx, jobId: string, idx: number, draft: ChunkDraft): Promise<void> {
  await db
    .update(compactionChunks)
    .set({ draft: draft.text, draftUsage: { ...draft.usage, latencyMs: Math.round(draft.usage.latencyMs) }, updatedAt: sql`now()` })
    .where(and(eq(compactionChunks.jobId, jobId), eq(compactionChunks.idx, idx), eq(compactionChunks.status, 'pending')));
}

export interface ChunkOutcome {
  summary: string;
  provider: string;
  model: string;
  usage: ChunkUsage;
  calls: number;
  costUsd: number;
  latencyMs: number;
  identifiers: readonly string[];
  identifiersFound: number;
  /** the span's state ledger (SPEC §5.6b), computed with no LLM beside the call */
  ledger: Ledger | null;
  fallback: string | null;
  /** strategy native: the provider's item the clip-archive will carry */
  providerItem?: ProviderCompaction | null;
}

/**
 * Memoizes a chunk's result and updates the job's progress in one statement. A concurrent
 * duplicate step finds the row done and changes nothing (the first result is the one kept).
 * Returns false when the row was already done.
 */
export async function completeChunk(db: DbOrTx, jobId: string, idx: number, outcome: ChunkOutcome): Promise<boolean> {
  const rows = await executePrepared<{ done: number }>(
    db,
    sql`
    with done as (
      update compaction_chunks set
        status = 'done', summary = ${outcome.summary}, provider = ${outcome.provider}, model = ${outcome.model},
        usage = ${JSON.stringify(outcome.usage)}::jsonb, calls = ${outcome.calls}, cost_usd = ${outcome.costUsd},
        latency_ms = ${Math.round(outcome.latencyMs)}, identifiers = ${toTextArray(outcome.identifiers)}::text[],
        identifiers_found = ${outcome.identifiersFound}, ledger = ${outcome.ledger === null ? null : JSON.stringify(outcome.ledger)}::jsonb,
        fallback = ${outcome.fallback}, provider_item = ${outcome.providerItem ? JSON.stringify(outcome.providerItem) : null}::jsonb,
        updated_at = now()
       where job_id = ${jobId} and idx = ${idx} and status = 'pending'
      returning job_id)
    -- an increment, not a count: concurrent steps serialize on the job row and each sees the
    -- other's committed increment, where a count would read a snapshot without it
    update compaction_jobs j set
      progress = jsonb_set(j.progress, '{chunksDone}', to_jsonb(coalesce((j.progress ->> 'chunksDone')::int, 0) + 1)),
      updated_at = now()
     where j.id = ${jobId} and exists (select 1 from done)
    returning 1 as done`,
  );
  return rows.length > 0;
}

/** A Postgres text[] literal: one parameter, never an expanded list (STACK.md pitfall). */
export function toTextArray(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`;
}
