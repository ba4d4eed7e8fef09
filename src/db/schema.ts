import { sql, type SQL } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
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
import type { Block, MessageKind, Role } from '../compaction/types.js';

/** SPEC §3. Postgres is the source of truth; Redis only carries the work. */

const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
const seqColumn = (name: string) => bigint(name, { mode: 'number' });

export const tenants = pgTable('tenants', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull().unique(),
  policy: jsonb('policy').$type<Record<string, unknown>>().notNull().default({}),
  /** compactions this tenant may have active at once; null: COMPACTD_TENANT_MAX_ACTIVE */
  maxActiveCompactions: integer('max_active_compactions'),
  /** compactions this tenant may start per minute; null: COMPACTD_TENANT_COMPACTIONS_PER_MINUTE */
  compactionsPerMinute: integer('compactions_per_minute'),
  createdAt: createdAt(),
});

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    /** first characters of the key, shown for identification */
    prefix: text('prefix').notNull(),
    /** sha256 of the whole key; the key itself is never stored */
    hash: text('hash').notNull().unique(),
    name: text('name'),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('api_keys_tenant_idx').on(t.tenantId)],
);

export const conversations = pgTable(
  'conversations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    /** the id clients use (client-chosen or a generated UUID), unique per tenant */
    externalId: text('external_id').notNull(),
    model: text('model'),
    contextLimit: integer('context_limit').notNull(),
    policy: jsonb('policy').$type<Record<string, unknown>>().notNull().default({}),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    activeTokens: integer('active_tokens').notNull().default(0),
    messageCount: integer('message_count').notNull().default(0),
    nextSeq: seqColumn('next_seq').notNull().default(1),
    compactionCount: integer('compaction_count').notNull().default(0),
    /** latest provider-reported input tokens (wins over our own count for triggers) */
    reportedInputTokens: integer('reported_input_tokens'),
    warning: boolean('warning').notNull().default(false),
    /** highest seq covered by the last completed compaction (cooldown) */
    lastCompactedSeq: seqColumn('last_compacted_seq'),
    /** after a failed/insufficient auto attempt: no new auto attempt until seq passes this */
    autoPausedUntilSeq: seqColumn('auto_paused_until_seq'),
    lastJobId: uuid('last_job_id'),
    version: integer('version').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('conversations_tenant_external_uq').on(t.tenantId, t.externalId)],
);

const messageColumns = () => ({
  conversationId: uuid('conversation_id')
    .notNull()
    .references(() => conversations.id, { onDelete: 'cascade' }),
  seq: seqColumn('seq').notNull(),
  role: text('role').$type<Role>().notNull(),
  kind: text('kind').$type<MessageKind>().notNull().default('message'),
  content: jsonb('content').$type<Block[]>().notNull(),
  name: text('name'),
  tokens: integer('tokens').notNull(),
  toolUseIds: text('tool_use_ids').array().notNull().default(sql`'{}'::text[]`),
  toolResultIds: text('tool_result_ids').array().notNull().default(sql`'{}'::text[]`),
  usage: jsonb('usage').$type<{ inputTokens?: number; outputTokens?: number }>(),
  metadata: jsonb('metadata').$type<Record<string, unknown>>(),
  createdAt: createdAt(),
});

/** The active history. */
export const messages = pgTable(
  'messages',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...messageColumns(),
  },
  (t) => [
    uniqueIndex('messages_conversation_seq_uq').on(t.conversationId, t.seq),
    index('messages_tool_use_ids_gin').using('gin', t.toolUseIds),
    index('messages_tool_result_ids_gin').using('gin', t.toolResultIds),
  ],
);

export type ArchiveReason = 'summarized' | 'masked' | 'truncated' | 'superseded_clip';

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/**
 * The searchable strings of a message's blocks as a jsonb array: text, tool names and
 * inputs, tool-result text (not ids, block types or image data). Only immutable functions,
 * so it can define a generated column; `silent` (last argument) so odd content never
 * fails an insert. Queries use it too, to build snippets from the same text.
 */
export const searchDocument = (content: SQL): SQL => sql`(
  jsonb_path_query_array(${content}, 'strict $[*] ? (@.type == "text").text', '{}', true)
  || jsonb_path_query_array(${content}, 'strict $[*] ? (@.type == "tool_use").name', '{}', true)
  || jsonb_path_query_array(${content}, 'strict $[*] ? (@.type == "tool_use").input', '{}', true)
  || jsonb_path_query_array(${content}, 'strict $[*] ? (@.type == "tool_result").content ? (@.type() == "string")', '{}', true)
  || jsonb_path_query_array(${content}, 'strict $[*] ? (@.type == "tool_result").content[*] ? (@.type == "text").text', '{}', true))`;

/** Text-search configuration of the archive index; queries must use the same one. */
export const SEARCH_CONFIG = 'english';

/** Originals as they were in `messages`, with the batch and job that archived them. */
export const archivedMessages = pgTable(
  'archived_messages',
  {
    archiveId: uuid('archive_id').primaryKey().defaultRandom(),
    /**
     * the id the message had in `messages` (kept so revert restores it unchanged). Not unique:
     * a masked/truncated message archives its original, and may later archive its rewritten
     * version when it is summarized.
     */
    id: uuid('id').notNull(),
    ...messageColumns(),
    batchId: uuid('batch_id'),
    jobId: uuid('job_id').notNull(),
    reason: text('reason').$type<ArchiveReason>().notNull(),
    archivedAt: timestamp('archived_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** full-text index of the archived content (GET …/archive/search, the recall tool) */
    searchText: tsvector('search_text').generatedAlwaysAs(
      (): SQL => sql`to_tsvector(${sql.raw(`'${SEARCH_CONFIG}'`)}::regconfig, ${searchDocument(sql.raw('content'))})`,
    ),
  },
  (t) => [
    index('archived_conversation_seq_idx').on(t.conversationId, t.seq),
    index('archived_search_gin').using('gin', t.searchText),
    index('archived_batch_idx').on(t.batchId, t.seq),
    index('archived_job_idx').on(t.jobId),
    index('archived_tool_use_ids_gin').using('gin', t.toolUseIds),
    index('archived_tool_result_ids_gin').using('gin', t.toolResultIds),
  ],
);

export const batches = pgTable(
  'batches',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    jobId: uuid('job_id').notNull(),
    level: integer('level').notNull(),
    summary: text('summary').notNull(),
    seqs: bigint('seqs', { mode: 'number' }).array().notNull(),
    sourceMessages: integer('source_messages').notNull(),
    sourceTokens: integer('source_tokens').notNull(),
    summaryTokens: integer('summary_tokens').notNull(),
    model: text('model').notNull(),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    cacheReadTokens: integer('cache_read_tokens').notNull().default(0),
    cacheWriteTokens: integer('cache_write_tokens').notNull().default(0),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    /** identifiers the summary was gated on: a consolidation must keep the union of its batches' */
    identifiers: text('identifiers').array().notNull().default(sql`'{}'::text[]`),
    supersededBy: uuid('superseded_by'),
    createdAt: createdAt(),
  },
  (t) => [index('batches_conversation_idx').on(t.conversationId, t.level, t.createdAt), index('batches_job_idx').on(t.jobId)],
);

export type JobStatus =
  | 'queued'
  | 'planning'
  | 'summarizing'
  | 'resummarizing'
  | 'committing'
  | 'completed'
  | 'noop'
  | 'failed'
  | 'cancelled';
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
    absorbedBatchIds: uuid('absorbed_batch_ids').array().notNull().default(sql`'{}'::uuid[]`),
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
    identifiers: text('identifiers').array().notNull().default(sql`'{}'::text[]`),
    identifiersFound: integer('identifiers_found').notNull().default(0),
    fallback: text('fallback'),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.idx] })],
);

/** First responses of POSTs made with an Idempotency-Key, replayed on repeats. */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    route: text('route').notNull(),
    requestHash: text('request_hash').notNull(),
    statusCode: integer('status_code'),
    response: jsonb('response').$type<unknown>(),
    headers: jsonb('headers').$type<Record<string, string>>(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.key] })],
);

/**
 * Webhook event types (SPEC §5.5 step 3; README "Webhooks"). Stable names. A text column,
 * not a database enum: adding a type needs no migration.
 */
export const WEBHOOK_EVENTS = ['compaction.completed', 'compaction.failed', 'compaction.noop', 'compaction.cancelled', 'context.warning', 'conversation.deleted'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/**
 * Callback URLs: one per tenant (`conversation_id` null) and at most one per conversation,
 * which wins over the tenant's. The secret signs deliveries, so it is stored as given.
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    conversationId: uuid('conversation_id').references(() => conversations.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    secret: text('secret').notNull(),
    /** subscribed event types; all of them when empty */
    events: text('events').array().$type<WebhookEvent[]>().notNull().default(sql`'{}'::text[]`),
    enabled: boolean('enabled').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('webhook_endpoints_tenant_uq').on(t.tenantId).where(sql`conversation_id is null`),
    uniqueIndex('webhook_endpoints_conversation_uq').on(t.conversationId).where(sql`conversation_id is not null`),
  ],
);

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One attempt of a delivery, as kept in the delivery log. */
export interface WebhookAttempt {
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** The delivery log: one row per event sent to an endpoint, with every attempt. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    /** also the event id receivers see (`compactd-delivery` header), so they can deduplicate */
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    conversationId: uuid('conversation_id').references(() => conversations.id, { onDelete: 'cascade' }),
    endpointId: uuid('endpoint_id').references(() => webhookEndpoints.id, { onDelete: 'set null' }),
    event: text('event').$type<WebhookEvent>().notNull(),
    url: text('url').notNull(),
    /** the exact JSON body sent (text, not jsonb, so every attempt signs the same bytes) */
    body: text('body').notNull(),
    status: text('status').$type<WebhookDeliveryStatus>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    attemptLog: jsonb('attempt_log').$type<WebhookAttempt[]>().notNull().default([]),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('webhook_deliveries_tenant_idx').on(t.tenantId, t.createdAt),
    index('webhook_deliveries_conversation_idx').on(t.conversationId, t.createdAt),
    index('webhook_deliveries_pending_idx').on(t.updatedAt).where(sql`status = 'pending'`),
  ],
);
