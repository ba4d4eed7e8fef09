import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

import type { Ledger } from '../../compaction/ledger/index.js';
import type { ProviderCompaction } from '../../compaction/types.js';
import { createdAt, seqColumn } from './columns.js';
import { conversations } from './history.js';
import { tenants } from './tenants.js';

/** Compaction jobs and their typed plan rows. */

export type JobStatus =
  'queued' | 'planning' | 'summarizing' | 'resummarizing' | 'committing' | 'completed' | 'noop' | 'failed' | 'cancelled';
export const ACTIVE_JOB_STATUSES: readonly JobStatus[] = ['queued', 'planning', 'summarizing', 'resummarizing', 'committing'];
/**
 * How a job came to be. `consolidate` jobs are the follow-ups a compaction enqueues when live
 * batches exceed `maxLiveBatches` (SPEC §5.5 step 4): they re-summarize batches, never messages.
 */
export type JobTrigger = 'api' | 'auto' | 'tool' | 'idle' | 'consolidate';
export const ACTIVE_STATUS_SQL = sql.raw(`('queued','planning','summarizing','resummarizing','committing')`);

export const compactionJobs = pgTable(
  'compaction_jobs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    status: text('status').$type<JobStatus>().notNull().default('queued'),
    trigger: text('trigger').$type<JobTrigger>().notNull(),
    options: jsonb('options').$type<Record<string, unknown>>().notNull().default({}),
    watermark: seqColumn('watermark'),
    /** the job-level part of the plan (rewrites, coverage, watermark); chunks are rows of `compaction_chunks` */
    plan: jsonb('plan').$type<unknown>(),
    /** the merged policy, frozen at plan time so a policy edit never changes a running job */
    policy: jsonb('policy').$type<Record<string, unknown>>(),
    progress: jsonb('progress').$type<{ chunksDone: number; chunksTotal: number }>().notNull().default({ chunksDone: 0, chunksTotal: 0 }),
    result: jsonb('result').$type<Record<string, unknown>>(),
    error: jsonb('error').$type<{ code: string; message: string }>(),
    attempts: integer('attempts').notNull().default(0),
    idempotencyKey: text('idempotency_key'),
    createdAt: createdAt(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    // At most one active compaction per conversation: the guard against duplicate compactions.
    // A consolidation runs beside it (it touches batches, not messages; commits serialize on
    // the conversation lock), and at most one consolidation is active at a time.
    uniqueIndex('compaction_jobs_one_active_uq')
      .on(t.conversationId)
      .where(sql`status in ${ACTIVE_STATUS_SQL} and trigger <> 'consolidate'`),
    uniqueIndex('compaction_jobs_one_consolidation_uq')
      .on(t.conversationId)
      .where(sql`status in ${ACTIVE_STATUS_SQL} and trigger = 'consolidate'`),
    index('compaction_jobs_conversation_idx').on(t.conversationId, t.createdAt),
    index('compaction_jobs_status_idx').on(t.status),
    // the tenant quotas count a tenant's active jobs and its jobs of the last minute
    index('compaction_jobs_tenant_created_idx').on(t.tenantId, t.createdAt),
  ],
);

export type ChunkStatus = 'pending' | 'done';

export interface ChunkUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/**
 * The plan's chunks as typed rows (SPEC §5.4), written in the plan's transaction. A summarize
 * step reads and writes its own row: its result is memoized here before the step reports
 * success, so a crash never pays for a finished LLM call twice. A consolidation has one row
 * whose `absorbedBatchIds` name the batches it merges.
 */
export const compactionChunks = pgTable(
  'compaction_chunks',
  {
    jobId: uuid('job_id')
      .notNull()
      .references(() => compactionJobs.id, { onDelete: 'cascade' }),
    idx: integer('idx').notNull(),
    /** exact seqs of the originals covered, ascending */
    seqs: bigint('seqs', { mode: 'number' }).array().notNull(),
    /** level of the batch this chunk becomes: 0 for messages, above its inputs for a consolidation */
    level: integer('level').notNull().default(0),
    absorbedBatchIds: uuid('absorbed_batch_ids')
      .array()
      .notNull()
      .default(sql`'{}'::uuid[]`),
    /** summarizer-input tokens of the source (the excerpt's counts stored at ingest, or the absorbed summaries) */
    sourceTokens: integer('source_tokens').notNull(),
    /** active-history tokens of the covered messages (0 for a consolidation) */
    messageTokens: integer('message_tokens').notNull().default(0),
    outputBudget: integer('output_budget').notNull(),
    truncatedForPrompt: boolean('truncated_for_prompt').notNull().default(false),
    status: text('status').$type<ChunkStatus>().notNull().default('pending'),
    /** a first answer kept before an optional identifier repair call */
    draft: text('draft'),
    draftUsage: jsonb('draft_usage').$type<ChunkUsage & { calls: number; costUsd: number; latencyMs: number }>(),
    summary: text('summary'),
    provider: text('provider'),
    model: text('model'),
    usage: jsonb('usage').$type<ChunkUsage>(),
    calls: integer('calls').notNull().default(0),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    latencyMs: integer('latency_ms').notNull().default(0),
    /** the identifiers this chunk was gated on (a consolidation is gated on the union of its batches') */
    identifiers: text('identifiers')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    identifiersFound: integer('identifiers_found').notNull().default(0),
    /** the state ledger of the chunk's span (SPEC §5.6b), or the merge of the absorbed batches' */
    ledger: jsonb('ledger').$type<Ledger>(),
    /** strategy native: the provider's compaction item, which the commit puts on the clip-archive */
    providerItem: jsonb('provider_item').$type<ProviderCompaction>(),
    fallback: text('fallback'),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.idx] })],
);

/** The span's names a completed compaction's context no longer holds (SPEC §5.9; the "what it forgot" view). */
export const jobForgotten = pgTable('job_forgotten', {
  jobId: uuid('job_id')
    .primaryKey()
    .references(() => compactionJobs.id, { onDelete: 'cascade' }),
  names: jsonb('names').$type<ForgottenName[]>().notNull(),
  createdAt: createdAt(),
});

export interface ForgottenName {
  kind: 'path' | 'command' | 'error' | 'id';
  name: string;
}
