import { sql } from 'drizzle-orm';

import type { Block, HistoryMessage, MessageKind, Role } from '../../compaction/types.js';
import type { DbOrTx } from '../client.js';

/**
 * What the plan step reads of the active history: seq, role, kind, stored tokens, tool-pair
 * links, pins and the scoring features, computed in SQL from the content so the content itself
 * never leaves Postgres. Content is read only for the few messages that need it: the
 * candidates of Tier 1/2 rewrites (and the calls they answer, for tool names) and the user's
 * latest request (the chunks' header). Memory is a few hundred bytes per message, whatever
 * the messages hold.
 */

/**
 * A message's text as the planner's scoring reads it: its blocks' text, tool calls with their
 * JSON input, tool results with their output, in the marker format of `render.ts` (tool
 * names of results are not known per message and are left out; an image is `[image]`, not
 * its reference: scoring reads only its length and keywords, and hashing belongs to the core).
 */
const MESSAGE_TEXT = sql.raw(`
  select string_agg(
           case b ->> 'type'
             when 'text' then b ->> 'text'
             when 'tool_use' then '[tool call ' || coalesce(b ->> 'name', '') || ' id=' || coalesce(b ->> 'id', '') || E']\\n' || coalesce((b -> 'input')::text, '{}')
             when 'tool_result' then '[tool result id=' || coalesce(b ->> 'tool_use_id', '') || case when b -> 'is_error' = 'true'::jsonb then ' error' else '' end || E']\\n' ||
               case jsonb_typeof(b -> 'content')
                 when 'string' then b ->> 'content'
                 else coalesce((select string_agg(case when p ->> 'type' = 'text' then p ->> 'text' else '[image]' end, E'\\n')
                                  from jsonb_array_elements(case jsonb_typeof(b -> 'content') when 'array' then b -> 'content' else '[]'::jsonb end) p), '')
               end
             when 'image' then '[image]'
             else ''
           end, E'\\n\\n' order by e.ord) as doc,
         coalesce(string_agg(case when b ->> 'type' = 'text' then b ->> 'text' end, E'\\n' order by e.ord), '') as typed,
         (count(*) filter (where b ->> 'type' = 'image'))::int as images
    from jsonb_array_elements(case jsonb_typeof(m.content) when 'array' then m.content else '[]'::jsonb end) with ordinality as e(b, ord)`);

type FeatureRow = {
  seq: string;
  role: Role;
  kind: MessageKind;
  tokens: number;
  tool_use_ids: string[];
  tool_result_ids: string[];
  meta: boolean;
  pinned: boolean;
  user_text: boolean;
  question: boolean;
  request: boolean;
  chars: number;
  keywords: number[];
  user_images: number;
};

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The scoring keywords as Postgres regexes matching like `keywordMatchers` (case-insensitive, at a word start). */
export function keywordPatterns(keywords: readonly string[]): string[] {
  return keywords.map((keyword) => `${/^\w/.test(keyword) ? '\\y' : ''}${escapeRegExp(keyword)}`);
}

/**
 * One regex matching where any of the patterns matches: a text it does not match holds no
 * keyword, and most messages then skip the scan per keyword (one pass instead of one per keyword).
 */
export function anyKeywordPattern(patterns: readonly string[]): string {
  return patterns.map((pattern) => `(?:${pattern})`).join('|');
}

export interface PlanHistory {
  /** the active history in seq order, `features` set, `content` empty unless asked for */
  messages: HistoryMessage[];
  /** seq of the newest user message that is a request (typed text, not a command's output nor a meta turn), or null */
  latestRequestSeq: number | null;
}

/** Rows of the features query per statement: its raw rows are garbage once mapped, so at most this many exist at once. */
export const PLAN_HISTORY_PAGE_ROWS = 10_000;

/**
 * One empty array for every empty list of a metadata-only message (content, tool ids,
 * keywords): most messages have them, and 100,000 messages held ~400,000 distinct empty
 * arrays. Frozen, so a mutation fails loudly instead of reaching every message (the planner
 * reads them; Tier 1/2 candidates get their content as a new array).
 */
const EMPTY: never[] = Object.freeze([]) as unknown as never[];
const orEmpty = <T>(values: T[]): T[] => (values.length === 0 ? EMPTY : values);

/** The driver returns a new string per row for role and kind; one copy of each value serves every message. */
const ROLES: Record<string, Role> = { system: 'system', user: 'user', assistant: 'assistant', tool: 'tool' };
const KINDS: Record<string, MessageKind> = {};
const interned = <T extends string>(table: Record<string, T>, value: T): T => (table[value] ??= value);

/**
 * The active history's metadata and scoring features, in seq order, read
 * `pageRows` at a time (keyset on seq; one statement up to that size). A
 * message costs ~150 bytes of heap, with its lists shared when empty and its role and kind
 * interned: the plan step's peak at 100,000 messages was the raw rows and their copies.
 */
export async function loadPlanHistory(
  db: DbOrTx,
  conversationId: string,
  keywords: readonly string[],
  pageRows = PLAN_HISTORY_PAGE_ROWS,
): Promise<PlanHistory> {
  const patterns = keywordPatterns(keywords);
  const messages: HistoryMessage[] = [];
  let latestRequestSeq: number | null = null;
  let after: string | null = null;
  for (;;) {
    const rows: FeatureRow[] = await loadFeaturePage(db, conversationId, patterns, after, pageRows);
    for (const row of rows) {
      const seq = Number(row.seq);
      if (row.request) latestRequestSeq = seq;
      messages.push({
        seq,
        role: interned(ROLES, row.role),
        kind: interned(KINDS, row.kind),
        content: EMPTY,
        tokens: row.tokens,
        toolUseIds: orEmpty(row.tool_use_ids),
        toolResultIds: orEmpty(row.tool_result_ids),
        ...(row.meta && { meta: true }),
        ...(row.pinned && { pinned: true }),
        features: {
          userText: row.user_text,
          question: row.question,
          chars: row.chars,
          keywords: orEmpty(row.keywords),
          userImages: row.user_images,
        },
      });
    }
    if (rows.length < pageRows) break;
    after = (rows.at(-1) as FeatureRow).seq;
  }
  return { messages, latestRequestSeq };
}

/** Below every seq: the first page's keyset bound. */
const FIRST_PAGE = '-9223372036854775808';

async function loadFeaturePage(
  db: DbOrTx,
  conversationId: string,
  patterns: readonly string[],
  after: string | null,
  pageRows: number,
): Promise<FeatureRow[]> {
  return db.execute<FeatureRow>(sql`
    select m.seq, m.role, m.kind, m.tokens, m.tool_use_ids, m.tool_result_ids, x.meta, m.pinned,
           (m.role = 'user' and d.typed ~ '\\S' and not x.meta) as user_text,
           (m.role = 'user' and strpos(d.typed, '?') > 0) as question,
           (m.role = 'user' and m.kind = 'message' and d.typed ~ '\\S' and d.typed !~ '^\\s*<(returncode|output)\\y' and not x.meta) as request,
           coalesce(length(d.doc), 0) as chars,
           case when d.doc ~* ${anyKeywordPattern(patterns)}
                then array(select (k.i - 1)::int from unnest(${sql.param(patterns)}::text[]) with ordinality as k(pattern, i)
                            where d.doc ~* k.pattern)
                else '{}'::int[] end as keywords,
           case when m.role = 'user' then d.images else 0 end as user_images
      from messages m
      cross join lateral (${MESSAGE_TEXT}) d
      -- a meta turn (meta-turns.ts: flagged at append) is never the user's request nor a pinned user turn
      cross join lateral (select m.role = 'user' and coalesce(m.metadata -> 'meta' = 'true'::jsonb, false) as meta) x
     where m.conversation_id = ${conversationId} and m.seq > ${after ?? FIRST_PAGE}::bigint
     order by m.seq
     limit ${pageRows}`);
}

/**
 * Content of the messages Tier 1/2 may rewrite: those answering tool calls with at least
 * `minTokens` tokens (a tool output is never larger than its message), and the messages
 * opening those calls (the placeholders name the tool). Keyed by seq.
 */
export async function loadRewriteCandidates(db: DbOrTx, conversationId: string, minTokens: number): Promise<Map<number, Block[]>> {
  const rows = await db.execute<{ seq: string; content: Block[] }>(sql`
    with candidates as (
      select seq, tool_result_ids from messages
       where conversation_id = ${conversationId} and tool_result_ids <> '{}' and tokens >= ${minTokens})
    select m.seq, m.content from messages m
     where m.conversation_id = ${conversationId}
       and (m.seq in (select seq from candidates)
            or m.tool_use_ids && (select coalesce(array_agg(id), '{}') from candidates, unnest(candidates.tool_result_ids) as id))`);
  return new Map(rows.map((row) => [Number(row.seq), row.content]));
}

/** One active message's content, or null. */
export async function loadMessageContent(db: DbOrTx, conversationId: string, seq: number): Promise<Block[] | null> {
  const [row] = await db.execute<{ content: Block[] }>(sql`
    select content from messages where conversation_id = ${conversationId} and seq = ${seq}`);
  return row?.content ?? null;
}
