import { bigint, index, integer, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

import type { Role } from '../../compaction/types.js';
import { archivedMessages, tsvector } from './history.js';

/**
 * Recall by fragment (SPEC §5.9, migration 0008): the lines of each archived original, matched
 * as substrings through a trigram index, beside the full-text index of `archived_messages`.
 * Written after a compaction commits (never inside its transaction) and erased with the
 * archived row (a revert, a deleted conversation).
 */
export const archivedRecallPieces = pgTable(
  'archived_recall_pieces',
  {
    archiveId: uuid('archive_id')
      .notNull()
      .references(() => archivedMessages.archiveId, { onDelete: 'cascade' }),
    conversationId: uuid('conversation_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    role: text('role').$type<Role>().notNull(),
    /** the tool of the tool call or tool result the line is in; null for plain text */
    tool: text('tool'),
    /** 1-based line of the message's recall text (its blocks' lines, in order) */
    line: integer('line').notNull(),
    /** 0-based part of a line longer than one piece (parts overlap, so a short fragment is whole in one) */
    part: integer('part').notNull(),
    text: text('text').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.archiveId, t.line, t.part] }),
    // btree_gin puts the conversation in the same GIN index: a fragment is looked up within
    // its conversation, never across every tenant's archive
    index('archived_recall_pieces_trgm').using('gin', t.conversationId, t.text.op('gin_trgm_ops')),
  ],
);

/**
 * One row per archived original whose recall pieces are written (zero pieces for a message
 * without text), with the full-text vector of its search text's first piece (migration 0011:
 * written after the commit with the pieces, never inside it).
 */
export const archivedRecallIndexed = pgTable(
  'archived_recall_indexed',
  {
    archiveId: uuid('archive_id')
      .primaryKey()
      .references(() => archivedMessages.archiveId, { onDelete: 'cascade' }),
    conversationId: uuid('conversation_id').notNull(),
    pieces: integer('pieces').notNull(),
    indexedAt: timestamp('indexed_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** full-text index of the first piece (GET …/archive/search); a longer message's other pieces are in `archived_search_pieces` */
    searchText: tsvector('search_text'),
  },
  (t) => [
    index('archived_recall_indexed_conversation_idx').on(t.conversationId),
    // btree_gin: words are looked up within their conversation, as fragments are
    index('archived_recall_indexed_search_gin').using('gin', t.conversationId, t.searchText),
  ],
);
