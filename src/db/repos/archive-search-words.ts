import { sql } from 'drizzle-orm';

import type { Role } from '../../compaction/types.js';
import type { DbOrTx } from '../client.js';
import { SEARCH_CONFIG, searchDocument, searchHeadVector } from '../schema.js';
import { archiveOrder, isCandidate } from './archive-order.js';
import { unindexedBacklog } from './recall-backlog.js';

/** A full-text hit: an archived original, its batch and job, its rank and a highlighted snippet. */
export interface WordHit {
  /** the archived row of the original */
  archiveId: string;
  seq: number;
  role: Role;
  /** the level-0 batch whose summary covers the seq; null when the original was masked or truncated but not summarized */
  batchId: string | null;
  /** the compaction that archived the original */
  jobId: string | null;
  rank: number;
  snippet: string;
}

const regconfig = sql.raw(`'${SEARCH_CONFIG}'::regconfig`);

const HEADLINE_OPTIONS = 'MaxFragments=2, MaxWords=24, MinWords=8, FragmentDelimiter=" … ", StartSel=**, StopSel=**';
/** ts_headline reads this much text around the match, whatever the message's size. */
const SNIPPET_WINDOW_BYTES = 2048;
/** A snippet's length at most (characters): ten hits stay far below 64 kB whatever the text. */
export const SNIPPET_MAX_CHARS = 480;

/**
 * Full-text search (the words half of recall) over the archived originals of a conversation (`websearch_to_tsquery`
 * syntax: words, "quoted phrases", OR, -exclusions), best match first.
 *
 * A message's text is indexed in pieces of at most 64 kB (`SEARCH_PIECE_BYTES`): the first in
 * `archived_recall_indexed.search_text`, every piece of a longer message in `archived_search_pieces`.
 * A message matches when one piece matches the whole query (the words of an AND or a phrase
 * must fall in one piece). The index is written after the compaction's commit: until then
 * the newest unindexed originals (recall-backlog.ts) are matched on their first piece, parsed
 * at search time. The snippet is drawn from a ~2 kB window of the first matching
 * piece (`compactd_search_window`), so a search costs at most `limit` times one piece's
 * parse, never the whole text, and its answer is bounded.
 */
export async function searchWords(db: DbOrTx, conversationId: string, params: { query: string; limit: number }): Promise<WordHit[]> {
  const rows = await db.execute<{
    archive_id: string;
    seq: string;
    role: Role;
    job_id: string;
    batch_id: string | null;
    rank: number;
    snippet: string;
  }>(sql`
    with q as (select websearch_to_tsquery(${regconfig}, ${params.query}) as query),
    matched as (
      select i.archive_id from archived_recall_indexed i, q where i.conversation_id = ${conversationId} and i.search_text @@ q.query
      union
      select p.archive_id from archived_search_pieces p, q where p.conversation_id = ${conversationId} and p.search_text @@ q.query
      union
      select b.archive_id from ${unindexedBacklog(conversationId)} b, q where ${searchHeadVector(sql`b.content`)} @@ q.query
    ),
    hits as (
      select a.seq, a.role, a.job_id, a.archive_id, a.content,
             coalesce(
               (select max(ts_rank(p.search_text, q.query, 1)) from archived_search_pieces p
                 where p.archive_id = a.archive_id and p.search_text @@ q.query),
               ts_rank(coalesce(i.search_text, ${searchHeadVector(sql`a.content`)}), q.query, 1)) as rank
        from matched m
        join archived_messages a on a.archive_id = m.archive_id
        left join archived_recall_indexed i on i.archive_id = a.archive_id
        cross join q
       where ${isCandidate('a')}
         and not exists (
           select 1 from archived_messages e
            where e.conversation_id = a.conversation_id and e.seq = a.seq and ${isCandidate('e')}
              and (${archiveOrder('e')}) < (${archiveOrder('a')}))
       order by rank desc, a.seq
       limit ${params.limit}
    )
    select h.archive_id, h.seq, h.role, h.job_id, h.rank, summarized.batch_id,
           ts_headline(${regconfig}, compactd_search_window(piece.body, q.query, ${SNIPPET_WINDOW_BYTES}), q.query, ${HEADLINE_OPTIONS}) as snippet
      from hits h
      cross join q
      -- the first matching piece of a long message; a short one is its one piece (at most 64 kB)
      cross join lateral (
        select coalesce(
          (select p.body from archived_search_pieces p
            where p.archive_id = h.archive_id and p.search_text @@ q.query order by p.piece limit 1),
          ${searchDocument(sql`h.content`)}) as body
      ) piece
      left join lateral (
        select s.batch_id from archived_messages s
         where s.conversation_id = ${conversationId} and s.seq = h.seq and s.reason = 'summarized' and s.batch_id is not null
         order by s.archived_at desc limit 1
      ) summarized on true
     order by h.rank desc, h.seq`);
  return rows.map((row) => ({
    archiveId: row.archive_id,
    seq: Number(row.seq),
    role: row.role,
    batchId: row.batch_id,
    jobId: row.job_id,
    rank: Number(row.rank),
    snippet: clipSnippet(row.snippet, SNIPPET_MAX_CHARS),
  }));
}

/**
 * At most `max` characters of a headline, keeping its first highlighted match (`**…**`) in
 * view: a word can be 256 bytes long, so 24 words are not a bound by themselves.
 */
export function clipSnippet(snippet: string, max: number): string {
  const chars = Array.from(snippet);
  if (chars.length <= max) return snippet;
  const keep = max - 2; // room for an ellipsis at each end
  const mark = snippet.indexOf('**');
  const markAt = mark < 0 ? 0 : Array.from(snippet.slice(0, mark)).length;
  const start = Math.max(0, Math.min(markAt - Math.floor(keep / 4), chars.length - keep));
  return `${start > 0 ? '…' : ''}${chars.slice(start, start + keep).join('')}${start + keep < chars.length ? '…' : ''}`;
}
