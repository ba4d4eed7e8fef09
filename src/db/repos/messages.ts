import { and, asc, eq, gt, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { archivedMessages, conversations, messages } from '../schema.js';
import type { Block, MessageKind, Role } from '../../compaction/types.js';

export type MessageRow = typeof messages.$inferSelect;

export interface NewMessage {
  role: Role;
  kind?: MessageKind;
  content: Block[];
  name?: string | undefined;
  tokens: number;
  toolUseIds: string[];
  toolResultIds: string[];
  usage?: { inputTokens?: number; outputTokens?: number } | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** Reads the next seq under the conversation lock (the caller holds it). */
export async function readNextSeq(db: DbOrTx, conversationId: string): Promise<number> {
  const [row] = await db.select({ nextSeq: conversations.nextSeq }).from(conversations).where(eq(conversations.id, conversationId));
  if (!row) throw new Error(`conversation ${conversationId} not found`);
  return row.nextSeq;
}

export async function insertMessages(
  db: DbOrTx,
  conversationId: string,
  firstSeq: number,
  rows: readonly NewMessage[],
): Promise<Array<{ id: string; seq: number; tokens: number }>> {
  if (rows.length === 0) return [];
  return db
    .insert(messages)
    .values(
      rows.map((m, i) => ({
        conversationId,
        seq: firstSeq + i,
        role: m.role,
        kind: m.kind ?? 'message',
        content: m.content,
        name: m.name ?? null,
        tokens: m.tokens,
        toolUseIds: m.toolUseIds,
        toolResultIds: m.toolResultIds,
        usage: m.usage ?? null,
        metadata: m.metadata ?? null,
      })),
    )
    .returning({ id: messages.id, seq: messages.seq, tokens: messages.tokens });
}

/** Which of `ids` have already been opened by a tool_use in the conversation (active or archived). */
export async function findOpenedToolUseIds(db: DbOrTx, conversationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const param = sql`${sql.param(ids)}::text[]`;
  const rows = await db.execute<{ id: string }>(sql`
    select distinct u.id from (
      select unnest(tool_use_ids) as id from ${messages}
        where ${messages.conversationId} = ${conversationId} and ${messages.toolUseIds} && ${param}
      union all
      select unnest(tool_use_ids) as id from ${archivedMessages}
        where ${archivedMessages.conversationId} = ${conversationId} and ${archivedMessages.toolUseIds} && ${param}
    ) u where u.id = any(${param})`);
  return new Set(rows.map((r) => r.id));
}

/** Which of `ids` are already answered by a tool_result in the active history. */
export async function findAnsweredToolUseIds(db: DbOrTx, conversationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const param = sql`${sql.param(ids)}::text[]`;
  const rows = await db.execute<{ id: string }>(sql`
    select distinct u.id from (
      select unnest(tool_result_ids) as id from ${messages}
        where ${messages.conversationId} = ${conversationId} and ${messages.toolResultIds} && ${param}
      union all
      select unnest(tool_result_ids) as id from ${archivedMessages}
        where ${archivedMessages.conversationId} = ${conversationId} and ${archivedMessages.toolResultIds} && ${param}
    ) u where u.id = any(${param})`);
  return new Set(rows.map((r) => r.id));
}

export async function listActiveMessages(db: DbOrTx, conversationId: string, options: { after?: number; limit?: number } = {}) {
  const where = options.after === undefined
    ? eq(messages.conversationId, conversationId)
    : and(eq(messages.conversationId, conversationId), gt(messages.seq, options.after));
  const query = db.select().from(messages).where(where).orderBy(asc(messages.seq));
  return options.limit === undefined ? query : query.limit(options.limit);
}
