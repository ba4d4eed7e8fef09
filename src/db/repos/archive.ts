import { sql, type SQL } from 'drizzle-orm';
import type { Block, MessageKind, Role } from '../../compaction/types.js';
import type { DbOrTx } from '../client.js';
import { SEARCH_CONFIG, searchDocument, type ArchiveReason } from '../schema.js';

/**
 * Reads of the archive: the *original* of each appended message, wherever it lives now.
 *
 * A seq's original is its earliest archived row other than a superseded clip-archive (a
 * message masked and later summarized is archived twice: first as it was appended, then
 * in its masked form), or the active row when it was never archived. Active and archived
 * clip-archives are not appended messages and are never originals.
 */

export interface OriginalRow {
  id: string;
  seq: number;
  role: Role;
  kind: MessageKind;
  content: Block[];
  name: string | null;
  tokens: number;
  createdAt: string;
  /** the original now lives in the archive (summarized, or rewritten in the active history) */
  archived: boolean;
  /** why the seq was last archived: `summarized` (gone from the active history), `masked`, `truncated`; null when active */
  reason: Exclude<ArchiveReason, 'superseded_clip'> | null;
  /** the level-0 batch whose summary covers the seq; null unless summarized */
  batchId: string | null;
}

type RawOriginal = {
  id: string;
  seq: string;
  role: Role;
  kind: MessageKind;
  content: Block[];
  name: string | null;
  tokens: number;
  created_at: string;
  archived: boolean;
  reason: OriginalRow['reason'];
  batch_id: string | null;
};

const bigints = (values: readonly number[]) => sql`${sql.param(values.map(String))}::bigint[]`;
const regconfig = sql.raw(`'${SEARCH_CONFIG}'::regconfig`);

/** Archived rows that can be originals: the same filter everywhere keeps the definition single. */
const isCandidate = (alias: string) => sql.raw(`${alias}.reason <> 'superseded_clip' and ${alias}.kind = 'message'`);
/**
 * Order of a seq's archived rows, earliest first. Each compaction commits in its own
 * transaction (its own `archived_at`) and archives a seq at most once, so `archived_at`
 * decides; the tie-breakers only make the order total, a rewrite's original (masked,
 * truncated) before a summarized version (false sorts first).
 */
const archiveOrder = (alias: string) => sql.raw(`${alias}.archived_at, ${alias}.reason = 'summarized', ${alias}.archive_id`);

/**
 * The originals (with their latest archive reason and summarizing batch) of the seqs that
 * `keys` selects as a one-column relation `(seq)`, plus a `clip` column of 0; unordered.
 */
function originalsOf(conversationId: string, keys: SQL): SQL {
  return sql`
    select k.seq, o.id, o.role, o.kind, o.content, o.name, o.tokens, to_json(o.created_at) #>> '{}' as created_at,
           o.archived, latest.reason, case when latest.reason = 'summarized' then latest.batch_id end as batch_id, 0 as clip
      from (${keys}) k
      cross join lateral (
        select * from (
          (select a.id, a.role, a.kind, a.content, a.name, a.tokens, a.created_at, true as archived, 0 as prio
             from archived_messages a
            where a.conversation_id = ${conversationId} and a.seq = k.seq and ${isCandidate('a')}
            order by ${archiveOrder('a')} limit 1)
          union all
          (select m.id, m.role, m.kind, m.content, m.name, m.tokens, m.created_at, false, 1
             from messages m
            where m.conversation_id = ${conversationId} and m.seq = k.seq and m.kind = 'message')
        ) candidates order by prio limit 1
      ) o
      left join lateral (
        select a.reason, a.batch_id from archived_messages a
         where a.conversation_id = ${conversationId} and a.seq = k.seq and ${isCandidate('a')}
         order by a.archived_at desc, a.reason = 'summarized' desc, a.archive_id desc limit 1
      ) latest on true`;
}

function toOriginal(row: RawOriginal): OriginalRow {
  return {
    id: row.id,
    seq: Number(row.seq),
    role: row.role,
    kind: row.kind,
    content: row.content,
    name: row.name,
    tokens: row.tokens,
    createdAt: row.created_at,
    archived: row.archived,
    reason: row.reason,
    batchId: row.batch_id,
  };
}

/** Originals of `seqs` after `after`, in seq order (a batch's messages: GET /v1/batches/:id/messages). */
export async function listOriginals(
  db: DbOrTx,
  conversationId: string,
  params: { seqs: readonly number[]; after: number; limit: number },
): Promise<OriginalRow[]> {
  if (params.seqs.length === 0) return [];
  const keys = sql`
    select distinct s.seq from unnest(${bigints(params.seqs)}) as s(seq)
     where s.seq > ${params.after} order by s.seq limit ${params.limit}`;
  const rows = await db.execute<RawOriginal>(sql`${originalsOf(conversationId, keys)} order by k.seq`);
  return rows.map(toOriginal);
}

/**
 * One page of the full history: the originals of the next `limit` seqs after `after`,
 * each followed by the active clip-archive of the same seq when `includeClipArchive`.
 * Both branches of the key union are index range scans cut at `limit`, so a page costs
 * the same at the start and at the end of a long conversation.
 */
async function historyPage(
  db: DbOrTx,
  conversationId: string,
  params: { after: number; limit: number; includeClipArchive: boolean },
): Promise<Array<OriginalRow & { clip: boolean }>> {
  const { after, limit } = params;
  const keys = sql`
    select seq from (
      (select distinct seq from archived_messages
        where conversation_id = ${conversationId} and seq > ${after} and ${isCandidate('archived_messages')} order by seq limit ${limit})
      union
      (select seq from messages where conversation_id = ${conversationId} and seq > ${after} and kind = 'message' order by seq limit ${limit})
    ) u order by seq limit ${limit}`;
  // A page that ends at seq X carries the clip-archive at X; the last page carries any left.
  const clips = sql`
    select m.seq, m.id, m.role, m.kind, m.content, m.name, m.tokens, to_json(m.created_at) #>> '{}',
           false, null, null, 1
      from messages m
     where ${params.includeClipArchive} and m.conversation_id = ${conversationId} and m.kind = 'clip_archive' and m.seq > ${after}
       and (m.seq <= (select max(seq) from page_keys) or (select count(*) from page_keys) < ${limit})`;
  const rows = await db.execute<RawOriginal & { clip: number }>(sql`
    with page_keys as (${keys})
    ${originalsOf(conversationId, sql`select seq from page_keys`)}
    union all ${clips}
    order by seq, clip`);
  return rows.map((row) => ({ ...toOriginal(row), clip: row.clip === 1 }));
}

/**
 * The full history in seq order, page by page (keyset on seq, one short query per page), so
 * an export never holds more than one page and never pins a connection while a slow client
 * reads. Pages are separate snapshots: a compaction committing mid-export moves rows between
 * the tables but not across seqs, so every seq still appears exactly once.
 */
export async function* streamHistory(
  db: DbOrTx,
  conversationId: string,
  options: { pageSize?: number; includeClipArchive?: boolean } = {},
): AsyncGenerator<OriginalRow[]> {
  const limit = options.pageSize ?? 1000;
  let after = 0;
  for (;;) {
    const page = await historyPage(db, conversationId, { after, limit, includeClipArchive: options.includeClipArchive ?? true });
    const originals = page.filter((row) => !row.clip);
    if (page.length > 0) yield page.map(({ clip: _clip, ...row }) => row);
    const last = originals[originals.length - 1];
    if (originals.length < limit || !last) return;
    after = last.seq;
  }
}

export interface SearchHit {
  seq: number;
  role: Role;
  /** the level-0 batch whose summary covers the seq; null when the original was masked or truncated but not summarized */
  batchId: string | null;
  /** the compaction that archived the original */
  jobId: string;
  rank: number;
  snippet: string;
}

const HEADLINE_OPTIONS = 'MaxFragments=2, MaxWords=24, MinWords=8, FragmentDelimiter=" … ", StartSel=**, StopSel=**';
/** ts_headline reads this much text around the match, whatever the message's size. */
const SNIPPET_WINDOW_BYTES = 2048;
/** A snippet's length at most (characters): ten hits stay far below 64 kB whatever the text. */
export const SNIPPET_MAX_CHARS = 480;

/**
 * Full-text search over the archived originals of a conversation (`websearch_to_tsquery`
 * syntax: words, "quoted phrases", OR, -exclusions), best match first.
 *
 * A message's text is indexed in pieces of at most 64 kB (`SEARCH_PIECE_BYTES`): the first in
 * `archived_messages.search_text`, every piece of a longer message in `archived_search_pieces`.
 * A message matches when one piece matches the whole query (the words of an AND or a phrase
 * must fall in one piece). The snippet is drawn from a ~2 kB window of the first matching
 * piece (`compactd_search_window`), so a search costs at most `limit` times one piece's
 * parse, never the whole text, and its answer is bounded.
 */
export async function searchArchive(db: DbOrTx, conversationId: string, params: { query: string; limit: number }): Promise<SearchHit[]> {
  const rows = await db.execute<{ seq: string; role: Role; job_id: string; batch_id: string | null; rank: number; snippet: string }>(sql`
    with q as (select websearch_to_tsquery(${regconfig}, ${params.query}) as query),
    matched as (
      select a.archive_id from archived_messages a, q where a.conversation_id = ${conversationId} and a.search_text @@ q.query
      union
      select p.archive_id from archived_search_pieces p, q where p.conversation_id = ${conversationId} and p.search_text @@ q.query
    ),
    hits as (
      select a.seq, a.role, a.job_id, a.archive_id, a.content,
             coalesce(
               (select max(ts_rank(p.search_text, q.query, 1)) from archived_search_pieces p
                 where p.archive_id = a.archive_id and p.search_text @@ q.query),
               ts_rank(a.search_text, q.query, 1)) as rank
        from matched m
        join archived_messages a on a.archive_id = m.archive_id
        cross join q
       where ${isCandidate('a')}
         and not exists (
           select 1 from archived_messages e
            where e.conversation_id = a.conversation_id and e.seq = a.seq and ${isCandidate('e')}
              and (${archiveOrder('e')}) < (${archiveOrder('a')}))
       order by rank desc, a.seq
       limit ${params.limit}
    )
    select h.seq, h.role, h.job_id, h.rank, summarized.batch_id,
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
