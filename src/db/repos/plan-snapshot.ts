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

/** The active history's metadata and scoring features, in seq order (one query). */
export async function loadPlanHistory(db: DbOrTx, conversationId: string, keywords: readonly string[]): Promise<PlanHistory> {
  const patterns = keywordPatterns(keywords);
  const rows = await db.execute<FeatureRow>(sql`
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
     where m.conversation_id = ${conversationId}
     order by m.seq`);
  let latestRequestSeq: number | null = null;
  const messages = rows.map((row): HistoryMessage => {
    const seq = Number(row.seq);
    if (row.request) latestRequestSeq = seq;
    return {
      seq,
      role: row.role,
      kind: row.kind,
      content: [],
      tokens: row.tokens,
      toolUseIds: row.tool_use_ids,
      toolResultIds: row.tool_result_ids,
      ...(row.meta && { meta: true }),
      ...(row.pinned && { pinned: true }),
      features: { userText: row.user_text, question: row.question, chars: row.chars, keywords: row.keywords, userImages: row.user_images },
    };
  });
  return { messages, latestRequestSeq };
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
