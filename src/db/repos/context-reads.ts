import { sql } from 'drizzle-orm';

import type { DbOrTx } from '../client.js';

/** Reads of the active context a commit needs after its writes (same transaction). */

/** The current clip-archive message, if any. */
export async function currentClipArchive(db: DbOrTx, conversationId: string): Promise<{ seq: number; tokens: number } | null> {
  const [row] = await db.execute<{ seq: string; tokens: number }>(sql`
    select seq, tokens from messages where conversation_id = ${conversationId} and kind = 'clip_archive' order by seq limit 1`);
  return row ? { seq: Number(row.seq), tokens: Number(row.tokens) } : null;
}

/**
 * Which of `identifiers` some active message (not the clip-archive) contains verbatim. The
 * search runs on the stored JSON text, so each identifier is looked for in its JSON-escaped
 * form (quotes, backslashes and newlines escaped as jsonb prints them).
 */
export async function identifiersInActiveMessages(
  db: DbOrTx,
  conversationId: string,
  identifiers: readonly string[],
): Promise<Set<string>> {
  if (identifiers.length === 0) return new Set();
  const escaped = identifiers.map((id) => JSON.stringify(id).slice(1, -1));
  const rows = await db.execute<{ i: number }>(sql`
    select i::int from unnest(${sql.param(escaped)}::text[]) with ordinality as t(needle, i)
     where exists (select 1 from messages m where m.conversation_id = ${conversationId} and m.kind = 'message'
                     and strpos(m.content::text, t.needle) > 0)`);
  return new Set(rows.map((r) => identifiers[r.i - 1] as string));
}
