import { type SQL, sql } from 'drizzle-orm';

import { isCandidate } from './archive-order.js';

/**
 * Newest archived originals without a recall marker (no pieces, no full-text vector yet) that
 * a search reads directly, at most, and their tokens at most (the first always): the backlog
 * is the seconds between a commit and its indexing, or an old archive the maintenance sweep
 * has not reached.
 */
export const BACKLOG_SCAN = 50;
export const BACKLOG_SCAN_TOKENS = 1_000_000;

/** The backlog a search reads directly, as a subquery of `(archive_id, content)`, newest first. */
export function unindexedBacklog(conversationId: string): SQL {
  return sql`(
    select b.archive_id, b.content
      from (select a.archive_id, a.content, sum(a.tokens) over (order by a.seq desc, a.archive_id) - a.tokens as tokens_before
              from archived_messages a
             where a.conversation_id = ${conversationId} and ${isCandidate('a')}
               and not exists (select 1 from archived_recall_indexed i where i.archive_id = a.archive_id)
             order by a.seq desc, a.archive_id limit ${BACKLOG_SCAN}) b
     where b.tokens_before < ${BACKLOG_SCAN_TOKENS})`;
}
