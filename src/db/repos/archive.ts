import { type SQL, sql } from 'drizzle-orm';

import type { Block, MessageKind, Role } from '../../compaction/types.js';
import type { DbOrTx } from '../client.js';
import type { ArchiveReason } from '../schema.js';
import { archiveOrder, isCandidate } from './archive-order.js';

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
  /** the metadata it was appended with (an importer's fields, the `meta` flag); null when none */
  metadata: Record<string, unknown> | null;
  /** the provider usage it was appended with; null when none */
  usage: MessageUsage | null;
  /** pinned now: the seq's active message carries the pin (an archived row never does, SPEC §5.6a) */
  pinned: boolean;
}

export interface MessageUsage {
  inputTokens?: number;
  outputTokens?: number;
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
  metadata: Record<string, unknown> | null;
  usage: MessageUsage | null;
  pinned: boolean;
};

const bigints = (values: readonly number[]) => sql`${sql.param(values.map(String))}::bigint[]`;

/**
 * The originals (with their latest archive reason and summarizing batch) of the seqs that
 * `keys` selects as a one-column relation `(seq)`, plus a `clip` column of 0 and the row's
 * primary key in its table (`row_key`), then the original's metadata and usage and whether the
 * seq's active message is pinned (a masked original's rewritten version may be); unordered.
 */
function originalsOf(conversationId: string, keys: SQL): SQL {
  return sql`
    select k.seq, o.id, o.role, o.kind, o.content, o.name, o.tokens, to_json(o.created_at) #>> '{}' as created_at,
           o.archived, latest.reason, case when latest.reason = 'summarized' then latest.batch_id end as batch_id, 0 as clip, o.row_key,
           o.metadata, o.usage,
           exists (select 1 from messages p
                    where p.conversation_id = ${conversationId} and p.seq = k.seq and p.kind = 'message' and p.pinned) as pinned
      from (${keys}) k
      cross join lateral (
        select * from (
          (select a.id, a.role, a.kind, a.content, a.name, a.tokens, a.created_at, true as archived, 0 as prio, a.archive_id as row_key,
                  a.metadata, a.usage
             from archived_messages a
            where a.conversation_id = ${conversationId} and a.seq = k.seq and ${isCandidate('a')}
            order by ${archiveOrder('a')} limit 1)
          union all
          (select m.id, m.role, m.kind, m.content, m.name, m.tokens, m.created_at, false, 1, m.id, m.metadata, m.usage
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
    metadata: row.metadata,
    usage: row.usage,
    pinned: row.pinned,
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
 * One row of a history page without its content and metadata (either may be megabytes): an
 * original (`clip` false) or a clip-archive, and the size of both as JSON text.
 */
interface PlannedRow {
  row: Omit<OriginalRow, 'content' | 'metadata'>;
  clip: boolean;
  /** where the content is: `archived_messages.archive_id` when archived, else `messages.id` */
  rowKey: string;
  bytes: number;
}

/** The active clip-archives that `where` selects, shaped like `originalsOf` rows with `clip` 1. */
function clipsWhere(conversationId: string, where: SQL): SQL {
  return sql`
    select m.seq, m.id, m.role, m.kind, m.content, m.name, m.tokens, to_json(m.created_at) #>> '{}',
           false, null, null, 1, m.id, m.metadata, m.usage, m.pinned
      from messages m
     where m.conversation_id = ${conversationId} and m.kind = 'clip_archive' and ${where}`;
}

/**
 * One page of the full history without its content: the originals of the next `limit` seqs
 * after `after`, each followed by the active clip-archive of the same seq when
 * `includeClipArchive`, with each row's key and size, in seq order. Both branches of the key
 * union are index range scans cut at `limit`, so a page costs the same at the start and at
 * the end of a long conversation; the sizes let the content be fetched in slices of bounded bytes.
 */
async function planHistoryPage(
  db: DbOrTx,
  conversationId: string,
  params: { after: number; limit: number; includeClipArchive: boolean },
): Promise<PlannedRow[]> {
  const { after, limit } = params;
  const keys = sql`
    select seq from (
      (select distinct seq from archived_messages
        where conversation_id = ${conversationId} and seq > ${after} and ${isCandidate('archived_messages')} order by seq limit ${limit})
      union
      (select seq from messages where conversation_id = ${conversationId} and seq > ${after} and kind = 'message' order by seq limit ${limit})
    ) u order by seq limit ${limit}`;
  // A page that ends at seq X carries the clip-archive at X; the last page carries any left.
  const clips = clipsWhere(
    conversationId,
    sql`${params.includeClipArchive} and m.seq > ${after}
       and (m.seq <= (select max(seq) from page_keys) or (select count(*) from page_keys) < ${limit})`,
  );
  const rows = await db.execute<Omit<RawOriginal, 'content' | 'metadata'> & { clip: number; row_key: string; bytes: number }>(sql`
    with page_keys as (${keys})
    select seq, id, role, kind, name, tokens, created_at, archived, reason, batch_id, clip, row_key, usage, pinned,
           octet_length(content::text) + coalesce(octet_length(metadata::text), 0) as bytes
      from (${originalsOf(conversationId, sql`select seq from page_keys`)} union all ${clips}) page
     order by seq, clip`);
  return rows.map(({ clip, row_key, bytes, ...raw }) => {
    const { content: _none, metadata: _later, ...row } = toOriginal({ ...raw, content: [], metadata: null });
    return { row, clip: clip === 1, rowKey: row_key, bytes: Number(bytes) };
  });
}

/**
 * The contents (and metadata) of a slice of a page, by primary key. A row that changed since the plan (a
 * compaction archived or rewrote it, a revert restored it) is not found here and is read
 * again by seq, where it is now, so every seq still appears exactly once, as appended.
 */
async function historySlice(db: DbOrTx, conversationId: string, slice: readonly PlannedRow[]): Promise<OriginalRow[]> {
  const archivedKeys = slice.filter((p) => p.row.archived).map((p) => p.rowKey);
  const activeKeys = slice.filter((p) => !p.row.archived).map((p) => p.rowKey);
  const found = await db.execute<{ key: string; content: Block[]; metadata: Record<string, unknown> | null }>(sql`
    select a.archive_id::text as key, a.content, a.metadata from archived_messages a where a.archive_id = any(${sql.param(archivedKeys)}::uuid[])
    union all
    select m.id::text, m.content, m.metadata from messages m
     where m.id = any(${sql.param(activeKeys)}::uuid[])
       and not exists (select 1 from archived_messages a where a.conversation_id = m.conversation_id and a.seq = m.seq and ${isCandidate('a')})`);
  const contents = new Map(found.map((row) => [row.key, row]));
  const moved = slice.filter((p) => !contents.has(p.rowKey));
  const reread = moved.length === 0 ? [] : await rereadBySeq(db, conversationId, moved);
  const rows = slice.flatMap((p) => {
    const stored = contents.get(p.rowKey);
    return stored === undefined ? [] : [{ ...p.row, content: stored.content, metadata: stored.metadata, clip: p.clip }];
  });
  return [...rows, ...reread].sort((x, y) => x.seq - y.seq || Number(x.clip) - Number(y.clip)).map(({ clip: _clip, ...row }) => row);
}

async function rereadBySeq(
  db: DbOrTx,
  conversationId: string,
  moved: readonly PlannedRow[],
): Promise<Array<OriginalRow & { clip: boolean }>> {
  const originals = moved.filter((p) => !p.clip).map((p) => p.row.seq);
  const clipSeqs = moved.filter((p) => p.clip).map((p) => p.row.seq);
  const rows = await db.execute<RawOriginal & { clip: number }>(sql`
    ${originalsOf(conversationId, sql`select unnest(${bigints(originals)}) as seq`)}
    union all ${clipsWhere(conversationId, sql`m.seq = any(${bigints(clipSeqs)})`)}`);
  return rows.map((row) => ({ ...toOriginal(row), clip: row.clip === 1 }));
}

/** Cuts a plan into consecutive slices of at most `maxBytes` (a row bigger than that is a slice of its own). */
export function sliceByBytes<T extends { bytes: number }>(rows: readonly T[], maxBytes: number): T[][] {
  const slices: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const row of rows) {
    if (current.length > 0 && bytes + row.bytes > maxBytes) {
      slices.push(current);
      current = [];
      bytes = 0;
    }
    current.push(row);
    bytes += row.bytes;
  }
  if (current.length > 0) slices.push(current);
  return slices;
}

/**
 * The full history in seq order, in pages of at most `pageSize` originals and about
 * `maxPageBytes` of content (keyset on seq: a short query for a page's plan, then one per
 * slice of it), so an export holds one slice at a time, however big the messages, and never
 * pins a connection while a slow client reads. Pages are separate snapshots: a compaction
 * committing mid-export moves rows between the tables but not across seqs, so every seq
 * still appears exactly once (a row that moved between the plan and its slice is read where
 * it is now).
 */
export async function* streamHistory(
  db: DbOrTx,
  conversationId: string,
  options: { pageSize?: number; maxPageBytes?: number; includeClipArchive?: boolean } = {},
): AsyncGenerator<OriginalRow[]> {
  const limit = options.pageSize ?? 1000;
  const maxBytes = options.maxPageBytes ?? 4 * 1024 * 1024;
  let after = 0;
  for (;;) {
    const plan = await planHistoryPage(db, conversationId, { after, limit, includeClipArchive: options.includeClipArchive ?? true });
    for (const slice of sliceByBytes(plan, maxBytes)) yield await historySlice(db, conversationId, slice);
    const originals = plan.filter((p) => !p.clip);
    const last = originals[originals.length - 1];
    if (originals.length < limit || !last) return;
    after = last.row.seq;
  }
}

export { clipSnippet, searchArchive, type SearchHit, type SearchLine, SNIPPET_MAX_CHARS } from './archive-search.js';
