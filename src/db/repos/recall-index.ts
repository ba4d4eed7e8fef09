import { sql } from 'drizzle-orm';

import { answeredToolUseIds, type RecallPiece, recallPieces, toolCallNames } from '../../compaction/recall/index.js';
import type { Block, Role } from '../../compaction/types.js';
import type { Db, DbOrTx, Tx } from '../client.js';
import { lockArchiveForIndexing } from '../locks.js';
import { SEARCH_CONFIG, SEARCH_PIECE_BYTES, searchHeadVector } from '../schema.js';
import { isCandidate } from './archive-order.js';

/** Where a pass stopped: the last original it read, in the archive's (seq, archive_id) order. */
export interface RecallIndexCursor {
  seq: string;
  archiveId: string;
}

/** What one indexing pass did. */
export interface RecallIndexPass {
  /** messages indexed by this pass */
  messages: number;
  /** piece rows written */
  pieces: number;
  /** archived originals of the conversation still without pieces (after `next`) */
  more: boolean;
  /** the last original this pass read: the next pass of the same loop starts after it */
  next: RecallIndexCursor | null;
}

/** Content read a pass, about: the pieces of a pass are written in one statement. */
const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;

/** Archived rows that can be originals: the rows a search may return. */
const CANDIDATE = isCandidate('a');

type PendingRow = {
  archive_id: string;
  seq: string;
  role: Role;
  content: Block[];
  bytes: number;
  running_bytes: string;
};

const regconfig = sql.raw(`'${SEARCH_CONFIG}'::regconfig`);

/**
 * A message whose JSON is shorter has a search text of one piece: the text is never longer
 * than the JSON it is drawn from, and the spaces the piece cutter adds to long runs (one per
 * 128 bytes) keep it below `SEARCH_PIECE_BYTES`.
 */
const ONE_PIECE_JSON_BYTES = 60_000;

/**
 * Fills the recall pieces (migration 0008) and the full-text index (migration 0011) of a
 * conversation's archived originals that have none yet, oldest seq first, at most `limit`
 * messages and about `maxBytes` of content a pass (always at least one message). Runs after
 * a compaction commits, never inside its transaction: each pass is a transaction of its own
 * holding the archive lock shared (db/locks.ts), so a revert or an erase of the same archive
 * runs entirely before or entirely after it, and the rows a pass reads are still there when it
 * writes. Deterministic: a caller loops while `more`, and two indexers at once never write a
 * message twice (the marker's primary key decides who writes it).
 */
export async function indexArchiveForRecall(db: Db, conversationId: string, params: IndexPassParams): Promise<RecallIndexPass> {
  return db.transaction(async (tx) => {
    await lockArchiveForIndexing(tx, conversationId);
    return indexPass(tx, conversationId, params);
  });
}

export interface IndexPassParams {
  limit: number;
  maxBytes?: number;
  /**
   * read only originals after this one: a loop passes each pass's `next` to the following one,
   * so its passes read the archive once between them instead of each skipping every original
   * the passes before it indexed (quadratic in the backlog: 49 passes over 10,000 originals
   * spent 1.2 s finding their rows). A loop starts without one, so an original archived before
   * its start (an earlier failure's backlog) is found by the next loop.
   */
  after?: RecallIndexCursor | null;
}

async function indexPass(db: Tx, conversationId: string, params: IndexPassParams): Promise<RecallIndexPass> {
  const maxBytes = params.maxBytes ?? DEFAULT_MAX_BYTES;
  const after = params.after ? sql`and (a.seq, a.archive_id) > (${params.after.seq}::bigint, ${params.after.archiveId}::uuid)` : sql``;
  const pending = await db.execute<PendingRow>(sql`
    select p.archive_id, p.seq, p.role, a.content, octet_length(a.content::text) as bytes,
           sum(octet_length(a.content::text)) over (order by p.seq, p.archive_id) as running_bytes
      from (
        -- the size only of the rows taken: computed before the limit, it turned every candidate's content into text
        select a.archive_id, a.seq, a.role
          from archived_messages a
         where a.conversation_id = ${conversationId} and ${CANDIDATE} ${after}
           and not exists (select 1 from archived_recall_indexed i where i.archive_id = a.archive_id)
         order by a.seq, a.archive_id
         limit ${params.limit + 1}
      ) p
      join archived_messages a on a.archive_id = p.archive_id
     order by p.seq, p.archive_id`);
  const taken = pending.slice(0, params.limit).filter((row, i) => i === 0 || Number(row.running_bytes) <= maxBytes);
  if (taken.length === 0) return { messages: 0, pieces: 0, more: false, next: null };

  const toolNames = await toolNamesFor(
    db,
    conversationId,
    taken.map((r) => r.content),
  );
  const rows = taken.map((row) => ({ row, pieces: recallPieces(row.content, toolNames) }));
  const written = await writePieces(db, conversationId, rows);
  const last = taken[taken.length - 1] as PendingRow;
  return {
    messages: taken.length,
    pieces: written,
    more: pending.length > taken.length,
    next: { seq: String(last.seq), archiveId: last.archive_id },
  };
}

/**
 * One statement: claims each message's marker with the full-text vector of its first piece, and
 * writes the recall pieces (and, for a long message, every full-text piece) of the messages it
 * claimed; a message another indexer claimed first is skipped.
 */
async function writePieces(
  db: Tx,
  conversationId: string,
  rows: ReadonlyArray<{ row: PendingRow; pieces: RecallPiece[] }>,
): Promise<number> {
  const flat = rows.flatMap((r) => r.pieces.map((piece) => ({ row: r.row, piece })));
  const column = <T>(pick: (r: { row: PendingRow; piece: RecallPiece }) => T) => sql.param(flat.map(pick));
  const [result] = await db.execute<{ written: string }>(sql`
    with claimed as (
      insert into archived_recall_indexed (archive_id, conversation_id, pieces, search_text)
      select m.archive_id, ${conversationId}, m.pieces, ${searchHeadVector(sql`a.content`)}
        from unnest(${sql.param(rows.map((r) => r.row.archive_id))}::uuid[], ${sql.param(rows.map((r) => r.pieces.length))}::int[]) as m(archive_id, pieces)
        join archived_messages a on a.archive_id = m.archive_id
      on conflict (archive_id) do nothing
      returning archive_id
    ),
    long_pieces as (
      insert into archived_search_pieces (archive_id, conversation_id, piece, body, search_text)
      select a.archive_id, ${conversationId}, p.ord - 1, p.body, to_tsvector(${regconfig}, p.body)
        from archived_messages a
        cross join lateral (select compactd_search_pieces(compactd_search_document(a.content), ${SEARCH_PIECE_BYTES}, 0) as pieces offset 0) s
        cross join lateral unnest(s.pieces) with ordinality as p(body, ord)
       where a.archive_id = any(${sql.param(rows.filter((r) => Number(r.row.bytes) > ONE_PIECE_JSON_BYTES).map((r) => r.row.archive_id))}::uuid[])
         and a.archive_id in (select archive_id from claimed) and cardinality(s.pieces) > 1
      on conflict do nothing
    ),
    written as (
      insert into archived_recall_pieces (archive_id, conversation_id, seq, role, tool, line, part, text)
      select r.archive_id, ${conversationId}, r.seq, r.role, r.tool, r.line, r.part, r.text
        from unnest(
          ${column((r) => r.row.archive_id)}::uuid[], ${column((r) => r.row.seq)}::bigint[], ${column((r) => r.row.role)}::text[],
          ${column((r) => r.piece.tool)}::text[], ${column((r) => r.piece.line)}::int[], ${column((r) => r.piece.part)}::int[],
          ${column((r) => r.piece.text)}::text[]
        ) as r(archive_id, seq, role, tool, line, part, text)
       where r.archive_id in (select archive_id from claimed)
      returning 1
    )
    select count(*) as written from written`);
  return Number(result?.written ?? 0);
}

/**
 * Tool names for the results among `contents`: from the calls in the same messages, else from
 * the conversation's other messages (a call archived earlier, or still active).
 */
export async function toolNamesFor(
  db: DbOrTx,
  conversationId: string,
  contents: ReadonlyArray<readonly Block[]>,
): Promise<Map<string, string>> {
  const names = new Map(contents.flatMap((c) => toolCallNames(c)));
  const missing = [...new Set(contents.flatMap((c) => answeredToolUseIds(c)))].filter((id) => !names.has(id));
  if (missing.length === 0) return names;
  const ids = sql`${sql.param(missing)}::text[]`;
  const found = await db.execute<{ id: string; name: string }>(sql`
    select b->>'id' as id, b->>'name' as name
      from (
        select a.content from archived_messages a where a.conversation_id = ${conversationId} and a.tool_use_ids && ${ids}
        union all
        select m.content from messages m where m.conversation_id = ${conversationId} and m.tool_use_ids && ${ids}
      ) c
      cross join lateral jsonb_array_elements(c.content) b
     where b->>'type' = 'tool_use' and b->>'id' = any(${ids})`);
  for (const row of found) if (!names.has(row.id)) names.set(row.id, row.name);
  return names;
}

/**
 * The first conversation after `afterId` (uuid order; null: from the start) whose archive has
 * originals without pieces: a keyset walk over conversations, so a sweep that finds nothing
 * has read each conversation's archive once.
 */
export async function nextConversationWithRecallBacklog(db: DbOrTx, afterId: string | null): Promise<string | null> {
  const after = afterId === null ? sql`true` : sql`c.id > ${afterId}`;
  const [row] = await db.execute<{ id: string }>(sql`
    select c.id from conversations c
     where ${after}
       and exists (
         select 1 from archived_messages a
          where a.conversation_id = c.id and ${CANDIDATE}
            and not exists (select 1 from archived_recall_indexed i where i.archive_id = a.archive_id))
     order by c.id limit 1`);
  return row?.id ?? null;
}
