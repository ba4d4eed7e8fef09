import { sql } from 'drizzle-orm';

import { focusLine, pieceLines, recallLines } from '../../compaction/recall/index.js';
import type { Block, Role } from '../../compaction/types.js';
import type { DbOrTx } from '../client.js';
import { archiveOrder, isCandidate } from './archive-order.js';
import { clipSnippet, searchWords, SNIPPET_MAX_CHARS, type WordHit } from './archive-search-words.js';
import { BACKLOG_SCAN_TOKENS, unindexedBacklog } from './recall-backlog.js';
import { toolNamesFor } from './recall-index.js';

export { clipSnippet, SNIPPET_MAX_CHARS } from './archive-search-words.js';

/**
 * Recall (SPEC §5.9): archived originals found by any fragment an agent would type — a whole
 * or relative path, a file name, a command, a piece of an error line, an id — as a substring
 * of their lines (trigram index, migration 0008), and by words through the full-text index.
 * Fragment hits come first (their rank is 1 + their full-text rank), then word-only hits by
 * full-text rank. Every part is bounded: at most `MATCH_ROWS` matching lines are read, the
 * not-yet-indexed backlog is read for its newest `BACKLOG_SCAN` messages (recall-backlog.ts), and each hit
 * carries at most `MAX_MATCH_LINES` matching lines with one line of context either side.
 */

export interface SearchLine {
  /** 1-based line of the message's recall text */
  line: number;
  text: string;
  /** false for a context line */
  match: boolean;
}

export interface SearchHit extends Omit<WordHit, 'archiveId'> {
  /** the tool of the first matching line's tool call or result; null for plain text */
  tool: string | null;
  /** `fragment`: the query is a substring of a line; `words`: a full-text match only */
  match: 'fragment' | 'words';
  lines: SearchLine[];
}

/** Matching lines read for ranking at most: a fragment in every line of a huge conversation stays bounded. */
const MATCH_ROWS = 5000;
const MAX_MATCH_LINES = 3;
/** A returned line's length at most (characters), around its match. */
export const LINE_MAX_CHARS = 240;
/** Shorter fragments have no trigram: the words half answers them alone. */
const MIN_FRAGMENT_CHARS = 3;

/** The substring a query stands for: the query itself, or the inside of one quoted string; null when too short. */
export function fragmentOf(query: string): string | null {
  const trimmed = query.trim();
  const quoted = /^"([^"]+)"$/.exec(trimmed);
  const fragment = quoted ? quoted[1]!.trim() : trimmed;
  return Array.from(fragment).length >= MIN_FRAGMENT_CHARS ? fragment : null;
}

/** An ILIKE pattern matching `fragment` literally anywhere (`\`, `%` and `_` escaped). */
export function containsPattern(fragment: string): string {
  return `%${fragment.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Plain words of a web-search query (no operators, no exclusions), for the lines of a word
 * hit: each without a common English ending, as full-text search stems it ("deploying" finds
 * the line with "deploy").
 */
export function queryWords(query: string): string[] {
  return query
    .replaceAll('"', ' ')
    .split(/\s+/)
    .filter((w) => !w.startsWith('-') && w !== 'OR')
    .map((w) => w.replace(/(?:ing|ed|es|s)$/i, (ending) => (w.length - ending.length >= MIN_FRAGMENT_CHARS ? '' : ending)))
    .filter((w) => Array.from(w).length >= MIN_FRAGMENT_CHARS);
}

interface FragmentHit {
  archiveId: string;
  seq: number;
  role: Role;
  jobId: string | null;
  batchId: string | null;
  rank: number;
  indexed: boolean;
}

async function searchFragment(db: DbOrTx, conversationId: string, query: string, pattern: string, limit: number): Promise<FragmentHit[]> {
  const rows = await db.execute<{
    archive_id: string;
    seq: string;
    role: Role;
    job_id: string;
    batch_id: string | null;
    rank: number;
    indexed: boolean;
  }>(sql`
    -- materialized: each half runs once, never once per joined row
    with matched as materialized (
      select p.archive_id, count(*) as lines, true as indexed
        from (select archive_id from archived_recall_pieces
               where conversation_id = ${conversationId} and text ilike ${pattern} limit ${MATCH_ROWS}) p
       group by p.archive_id
      union all
      select b.archive_id, 1, false
        from ${unindexedBacklog(conversationId)} b
       where compactd_search_document(b.content) ilike ${pattern}
    ),
    hits as (
      select a.archive_id, a.seq, a.role, a.job_id, m.indexed,
             1 + coalesce(ts_rank(i.search_text, websearch_to_tsquery('english'::regconfig, ${query}), 1), 0) as rank, m.lines
        from matched m
        join archived_messages a on a.archive_id = m.archive_id
        left join archived_recall_indexed i on i.archive_id = a.archive_id
       where ${isCandidate('a')}
         and not exists (
           select 1 from archived_messages e
            where e.conversation_id = a.conversation_id and e.seq = a.seq and ${isCandidate('e')}
              and (${archiveOrder('e')}) < (${archiveOrder('a')}))
       order by rank desc, m.lines desc, a.seq
       limit ${limit}
    )
    select h.archive_id, h.seq, h.role, h.job_id, h.rank, h.indexed, summarized.batch_id
      from hits h
      left join lateral (
        select s.batch_id from archived_messages s
         where s.conversation_id = ${conversationId} and s.seq = h.seq and s.reason = 'summarized' and s.batch_id is not null
         order by s.archived_at desc limit 1
      ) summarized on true
     order by h.rank desc, h.lines desc, h.seq`);
  return rows.map((r) => ({
    archiveId: r.archive_id,
    seq: Number(r.seq),
    role: r.role,
    jobId: r.job_id,
    batchId: r.batch_id,
    rank: Number(r.rank),
    indexed: r.indexed,
  }));
}

type LineRow = { archive_id: string; line: number; part: number; tool: string | null; text: string; match: boolean };
type PieceRow = { archive_id: string; line: number; part: number; tool: string | null; text: string; matched: boolean };

/**
 * The first matching lines of indexed hits, each with the line before and after: the first
 * matching pieces and the piece either side of each (one piece holds several short lines),
 * cut into their lines here.
 */
async function indexedLines(
  db: DbOrTx,
  archiveIds: readonly string[],
  patterns: readonly string[],
  needles: readonly string[],
): Promise<LineRow[]> {
  if (archiveIds.length === 0 || patterns.length === 0) return [];
  const pieces = await db.execute<PieceRow>(sql`
    select h.archive_id, c.line, c.part, c.tool, c.text, c.matched
      from unnest(${sql.param(archiveIds)}::uuid[]) as h(archive_id)
      cross join lateral (
        select p.line, p.part from archived_recall_pieces p
         where p.archive_id = h.archive_id and p.text ilike any(${sql.param(patterns)}::text[])
         order by p.line, p.part limit ${MAX_MATCH_LINES}
      ) m
      cross join lateral (
        select q.line, q.part, q.tool, q.text, true as matched from archived_recall_pieces q
         where q.archive_id = h.archive_id and q.line = m.line and q.part = m.part
        union all
        (select q.line, q.part, q.tool, q.text, false from archived_recall_pieces q
          where q.archive_id = h.archive_id and (q.line, q.part) < (m.line, m.part) order by q.line desc, q.part desc limit 1)
        union all
        (select q.line, q.part, q.tool, q.text, false from archived_recall_pieces q
          where q.archive_id = h.archive_id and (q.line, q.part) > (m.line, m.part) order by q.line, q.part limit 1)
      ) c`);
  const byArchive = new Map<string, PieceRow[]>();
  for (const piece of pieces) byArchive.set(piece.archive_id, [...(byArchive.get(piece.archive_id) ?? []), piece]);
  return [...byArchive.values()].flatMap((rows) => linesAroundMatches(rows, needles));
}

/** The matching lines of one hit's pieces (at most MAX_MATCH_LINES), and the line either side of each. */
function linesAroundMatches(pieces: readonly PieceRow[], needles: readonly string[]): LineRow[] {
  const lowered = needles.map((n) => n.toLowerCase());
  const unique = new Map<string, PieceRow>();
  for (const piece of pieces) {
    const key = `${piece.line}:${piece.part}`;
    const seen = unique.get(key);
    if (!seen || (piece.matched && !seen.matched)) unique.set(key, piece);
  }
  const ordered = [...unique.values()].sort((x, y) => x.line - y.line || x.part - y.part);
  const lines = ordered.flatMap((piece) => {
    const held = pieceLines(piece).map((l): LineRow => ({
      archive_id: piece.archive_id,
      part: piece.part,
      ...l,
      match: piece.matched && lowered.some((n) => l.text.toLowerCase().includes(n)),
    }));
    // the database matched the piece (its case folding may differ from this one's): never a hit without a line
    if (piece.matched && !held.some((l) => l.match)) held[0]!.match = true;
    return held;
  });
  const matched = [...new Set(lines.filter((l) => l.match).map((l) => l.line))].slice(0, MAX_MATCH_LINES);
  const hit = new Set(matched);
  const wanted = new Set(matched.flatMap((line) => [line - 1, line, line + 1]));
  return lines.filter((l) => wanted.has(l.line)).map((l) => ({ ...l, match: l.match && hit.has(l.line) }));
}

/** The archived rows among `archiveIds` whose recall pieces are written. */
async function indexedAmong(db: DbOrTx, archiveIds: readonly string[]): Promise<Set<string>> {
  if (archiveIds.length === 0) return new Set();
  const rows = await db.execute<{ archive_id: string }>(sql`
    select archive_id from archived_recall_indexed where archive_id = any(${sql.param(archiveIds)}::uuid[])`);
  return new Set(rows.map((r) => r.archive_id));
}

/**
 * Lines of hits not indexed yet, read from their content (the backlog a search reads
 * directly), for as many of them as fit in `BACKLOG_SCAN_TOKENS` (the first always): the
 * others keep their snippet only.
 */
async function backlogLines(
  db: DbOrTx,
  conversationId: string,
  archiveIds: readonly string[],
  needles: readonly string[],
): Promise<LineRow[]> {
  if (archiveIds.length === 0 || needles.length === 0) return [];
  const rows = await db.execute<{ archive_id: string; content: Block[] }>(sql`
    select b.archive_id, a.content
      from (select archive_id, sum(tokens) over (order by seq, archive_id) - tokens as tokens_before
              from archived_messages where archive_id = any(${sql.param(archiveIds)}::uuid[])) b
      join archived_messages a on a.archive_id = b.archive_id
     where b.tokens_before < ${BACKLOG_SCAN_TOKENS}`);
  const lowered = needles.map((n) => n.toLowerCase());
  const toolNames = await toolNamesFor(
    db,
    conversationId,
    rows.map((r) => r.content),
  );
  return rows.flatMap((row) => {
    const lines = recallLines(row.content, toolNames);
    const matching = lines.filter((l) => lowered.some((n) => l.text.toLowerCase().includes(n))).slice(0, MAX_MATCH_LINES);
    const wanted = new Set(matching.flatMap((l) => [l.line - 1, l.line, l.line + 1]));
    const hit = new Set(matching.map((l) => l.line));
    return lines
      .filter((l) => wanted.has(l.line))
      .map((l) => ({ archive_id: row.archive_id, line: l.line, part: 0, tool: l.tool, text: l.text, match: hit.has(l.line) }));
  });
}

/** A hit's lines in order, each once (a context line that also matches is a match), capped around the needle. */
function shapeLines(rows: readonly LineRow[], needle: string): { tool: string | null; lines: SearchLine[] } {
  const byKey = new Map<string, LineRow>();
  for (const row of [...rows].sort((x, y) => x.line - y.line || x.part - y.part)) {
    const key = String(row.line);
    const seen = byKey.get(key);
    if (!seen || (row.match && !seen.match)) byKey.set(key, row);
  }
  const ordered = [...byKey.values()].sort((x, y) => x.line - y.line);
  const firstMatch = ordered.find((r) => r.match);
  return {
    tool: firstMatch?.tool ?? null,
    lines: ordered.map((r) => ({ line: r.line, text: focusLine(r.text, needle, LINE_MAX_CHARS), match: r.match })),
  };
}

/** A snippet for a hit the full-text half did not find: its first matching line, the fragment in **bold**. */
function lineSnippet(lines: readonly SearchLine[], fragment: string): string {
  const line = lines.find((l) => l.match)?.text ?? '';
  const at = line.toLowerCase().indexOf(fragment.toLowerCase());
  const marked = at < 0 ? line : `${line.slice(0, at)}**${line.slice(at, at + fragment.length)}**${line.slice(at + fragment.length)}`;
  return clipSnippet(marked, SNIPPET_MAX_CHARS);
}

export async function searchArchive(db: DbOrTx, conversationId: string, params: { query: string; limit: number }): Promise<SearchHit[]> {
  const fragment = fragmentOf(params.query);
  const pattern = fragment === null ? null : containsPattern(fragment);
  const [fragmentHits, wordHits] = await Promise.all([
    pattern === null ? Promise.resolve([]) : searchFragment(db, conversationId, params.query, pattern, params.limit),
    searchWords(db, conversationId, params),
  ]);
  const byWords = new Map(wordHits.map((h) => [h.archiveId, h]));
  const fragmentIds = new Set(fragmentHits.map((h) => h.archiveId));
  const merged = [
    ...fragmentHits.map((h) => ({ ...h, match: 'fragment' as const, snippet: byWords.get(h.archiveId)?.snippet ?? null })),
    ...wordHits
      .filter((h) => !fragmentIds.has(h.archiveId))
      .map((h) => ({ ...h, match: 'words' as const, indexed: false, snippet: h.snippet })),
  ].slice(0, params.limit);
  const indexed = await indexedAmong(
    db,
    merged.filter((h) => h.match === 'words').map((h) => h.archiveId),
  );
  for (const h of merged) if (h.match === 'words') h.indexed = indexed.has(h.archiveId);

  const words = queryWords(params.query);
  const patternsOf = (m: 'fragment' | 'words') => (m === 'fragment' && pattern !== null ? [pattern] : words.map(containsPattern));
  const needlesOf = (m: 'fragment' | 'words') => (m === 'fragment' && fragment !== null ? [fragment] : words);
  const lineRows: LineRow[] = [];
  for (const m of ['fragment', 'words'] as const) {
    const of = merged.filter((h) => h.match === m);
    lineRows.push(
      ...(await indexedLines(
        db,
        of.filter((h) => h.indexed).map((h) => h.archiveId),
        patternsOf(m),
        needlesOf(m),
      )),
    );
    lineRows.push(
      ...(await backlogLines(
        db,
        conversationId,
        of.filter((h) => !h.indexed).map((h) => h.archiveId),
        needlesOf(m),
      )),
    );
  }
  return merged.map((h) => {
    const needle = needlesOf(h.match)[0] ?? '';
    const { tool, lines } = shapeLines(
      lineRows.filter((r) => r.archive_id === h.archiveId),
      needle,
    );
    return {
      seq: h.seq,
      role: h.role,
      batchId: h.batchId,
      jobId: h.jobId,
      rank: h.rank,
      snippet: h.snippet ?? lineSnippet(lines, needle),
      tool,
      match: h.match,
      lines,
    };
  });
}
