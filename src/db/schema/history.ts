import { type SQL, sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
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

import type { Ledger } from '../../compaction/ledger/index.js';
import type { Block, MessageKind, Role } from '../../compaction/types.js';
import { createdAt, seqColumn } from './columns.js';
import { tenants } from './tenants.js';

/** Conversations, their active history, the archive of originals and the batch summaries. */

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
    /**
     * the conversation this one was started from (a sub-agent's), of the same tenant; erasing
     * the parent leaves its children, unlinked
     */
    parentId: uuid('parent_id').references((): AnyPgColumn => conversations.id, { onDelete: 'set null' }),
  },
  (t) => [
    uniqueIndex('conversations_tenant_external_uq').on(t.tenantId, t.externalId),
    // the order of GET /v1/conversations: a page is one index range, however many the tenant has
    index('conversations_tenant_created_idx').on(t.tenantId, t.createdAt, t.externalId),
    // a parent's children: the listing's filter, and what erasing the parent looks up to unlink them
    index('conversations_parent_idx')
      .on(t.parentId)
      .where(sql`parent_id is not null`),
  ],
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
  toolUseIds: text('tool_use_ids')
    .array()
    .notNull()
    .default(sql`'{}'::text[]`),
  toolResultIds: text('tool_result_ids')
    .array()
    .notNull()
    .default(sql`'{}'::text[]`),
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
    /**
     * never archived nor rewritten while set (SPEC §5.6a). Active rows only: a message is
     * unpinned before any compaction can archive it, so the archive has no such column.
     */
    pinned: boolean('pinned').notNull().default(false),
  },
  (t) => [
    uniqueIndex('messages_conversation_seq_uq').on(t.conversationId, t.seq),
    index('messages_tool_use_ids_gin').using('gin', t.toolUseIds),
    index('messages_tool_result_ids_gin').using('gin', t.toolResultIds),
  ],
);

/**
 * Why an original is in the archive: a compaction `summarized` it, `masked` or `truncated` it in
 * place, or `superseded_clip` (an older clip-archive); `rewound`: the gateway's client no longer
 * sends it (a retry, an edited or rewound turn), so it left the active history without a job.
 */
export type ArchiveReason = 'summarized' | 'masked' | 'truncated' | 'superseded_clip' | 'rewound';

export const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/**
 * The searchable strings of a message's blocks, one a line: text, tool names, the string
 * values of tool inputs, tool-result text (not ids, block types or image data). A SQL
 * function (migration 0006) so the indexer, the search of the unindexed backlog and the snippets
 * read the same text.
 */
export const searchDocument = (content: SQL): SQL => sql`compactd_search_document(${content})`;

/**
 * A message's search text is indexed in pieces of at most this many bytes: one tsvector
 * holds at most 1 MB and adversarial text (unique short words, hyphenated compounds of
 * 4-byte letters) makes ~4 bytes of it per byte of input, so a piece's vector stays under
 * a third of the limit. The first piece is `archived_recall_indexed.search_text`; a message with
 * more has every piece in `archived_search_pieces` (both written by the recall indexer). Fixed in the
 * SQL functions of that migration: change both together.
 */
export const SEARCH_PIECE_BYTES = 65536;

/** Text-search configuration of the archive index; queries must use the same one. */
export const SEARCH_CONFIG = 'english';

/** The full-text vector of a message's first search piece: what the indexer stores and a search of the unindexed backlog computes. */
export const searchHeadVector = (content: SQL): SQL =>
  sql`to_tsvector(${sql.raw(`'${SEARCH_CONFIG}'`)}::regconfig, compactd_search_head(${content}))`;

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
    /** the compaction that archived it; null for a `rewound` original (no job archives those) */
    jobId: uuid('job_id'),
    reason: text('reason').$type<ArchiveReason>().notNull(),
    archivedAt: timestamp('archived_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    index('archived_conversation_seq_idx').on(t.conversationId, t.seq),
    index('archived_batch_idx').on(t.batchId, t.seq),
    index('archived_job_idx').on(t.jobId),
    index('archived_tool_use_ids_gin').using('gin', t.toolUseIds),
    index('archived_tool_result_ids_gin').using('gin', t.toolResultIds),
  ],
);

/**
 * The search pieces of an archived message whose text is longer than one piece (every piece,
 * the first included, so a snippet never re-reads the whole message). Written after the
 * compaction's commit by the recall indexer (migration 0011), erased with the archived row.
 */
export const archivedSearchPieces = pgTable(
  'archived_search_pieces',
  {
    archiveId: uuid('archive_id')
      .notNull()
      .references(() => archivedMessages.archiveId, { onDelete: 'cascade' }),
    conversationId: uuid('conversation_id').notNull(),
    /** 0-based: piece 0 is the text `archived_recall_indexed.search_text` indexes */
    piece: integer('piece').notNull(),
    body: text('body').notNull(),
    searchText: tsvector('search_text').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.archiveId, t.piece] }),
    index('archived_search_pieces_conversation_idx').on(t.conversationId),
    index('archived_search_pieces_gin').using('gin', t.searchText),
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
    identifiers: text('identifiers')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    /** the state ledger of the span (SPEC §5.6b); null for batches written before it */
    ledger: jsonb('ledger').$type<Ledger>(),
    supersededBy: uuid('superseded_by'),
    createdAt: createdAt(),
  },
  (t) => [index('batches_conversation_idx').on(t.conversationId, t.level, t.createdAt), index('batches_job_idx').on(t.jobId)],
);
