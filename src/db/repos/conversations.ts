import { and, eq, ne, sql } from 'drizzle-orm';

import type { TriggerState } from '../../compaction/trigger/index.js';
import type { DbOrTx } from '../client.js';
import { compiledStatement, preparedPerHandle, tableRowMapper } from '../prepared.js';
import { compactionJobs, conversations } from '../schema.js';

export type ConversationRow = typeof conversations.$inferSelect;

export interface NewConversation {
  tenantId: string;
  externalId: string;
  model: string | null;
  contextLimit: number;
  policy: Record<string, unknown>;
  metadata: Record<string, unknown>;
  /** the parent conversation's id (not its external id), of the same tenant */
  parentId?: string | null;
}

/** Inserts the conversation; null when the tenant already has one with that id. */
export async function insertConversation(db: DbOrTx, params: NewConversation): Promise<ConversationRow | null> {
  const [row] = await db
    .insert(conversations)
    .values(params)
    .onConflictDoNothing({ target: [conversations.tenantId, conversations.externalId] })
    .returning();
  return row ?? null;
}

const byExternalId = preparedPerHandle((db) =>
  db
    .select()
    .from(conversations)
    .where(and(eq(conversations.tenantId, sql.placeholder('tenantId')), eq(conversations.externalId, sql.placeholder('externalId'))))
    .prepare('conversation_by_external_id'),
);

export async function getConversation(db: DbOrTx, tenantId: string, externalId: string): Promise<ConversationRow | null> {
  const [row] = await byExternalId(db).execute({ tenantId, externalId });
  return row ?? null;
}

const byId = preparedPerHandle((db) =>
  db
    .select()
    .from(conversations)
    .where(eq(conversations.id, sql.placeholder('id')))
    .prepare('conversation_by_id'),
);

export async function getConversationById(db: DbOrTx, id: string): Promise<ConversationRow | null> {
  const [row] = await byId(db).execute({ id });
  return row ?? null;
}

/** The conversation's latest compaction; consolidations are follow-ups, listed with the jobs, not here. */
const lastJob = preparedPerHandle((db) =>
  db
    .select({ id: compactionJobs.id, status: compactionJobs.status })
    .from(compactionJobs)
    .where(and(eq(compactionJobs.conversationId, sql.placeholder('conversationId')), ne(compactionJobs.trigger, 'consolidate')))
    .orderBy(sql`${compactionJobs.createdAt} desc`)
    .limit(1)
    .prepare('last_job_of_conversation'),
);

export async function getLastJob(db: DbOrTx, conversationId: string) {
  const [row] = await lastJob(db).execute({ conversationId });
  return row ?? null;
}

/**
 * Reserves the seqs of an append and applies its counter deltas in one statement (called
 * under the conversation lock); the appended rows take the seqs from `nextSeq - addedMessages`.
 */
export async function recordAppend(
  db: DbOrTx,
  params: {
    id: string;
    addedMessages: number;
    addedTokens: number;
    reportedInputTokens: number | undefined;
  },
): Promise<ConversationRow> {
  const [raw] = await recordAppendStatement(db, {
    id: params.id,
    messages: params.addedMessages,
    tokens: params.addedTokens,
    reported: params.reportedInputTokens ?? null,
  });
  if (!raw) throw new Error(`conversation ${params.id} vanished during append`);
  return conversationRow(raw);
}

const conversationRow = tableRowMapper(conversations);

/** Run on every append: compiled once (see compiledStatement); a reported count of null keeps the stored one. */
const recordAppendStatement = compiledStatement<
  Record<string, unknown>,
  { id: string; messages: number; tokens: number; reported: number | null }
>(sql`
  update ${conversations}
     set next_seq = next_seq + ${sql.placeholder('messages')}::int,
         message_count = message_count + ${sql.placeholder('messages')}::int,
         active_tokens = active_tokens + ${sql.placeholder('tokens')}::int,
         reported_input_tokens = coalesce(${sql.placeholder('reported')}::int, reported_input_tokens),
         version = version + 1,
         updated_at = now()
   where id = ${sql.placeholder('id')}
  returning *`);

export async function setWarning(db: DbOrTx, id: string, warning: boolean): Promise<void> {
  await db.update(conversations).set({ warning }).where(eq(conversations.id, id));
}

/** No auto compaction until a message past `untilSeq` arrives (SPEC §5.1). */
export async function pauseAutoCompaction(db: DbOrTx, id: string, untilSeq: number): Promise<void> {
  await db.update(conversations).set({ autoPausedUntilSeq: untilSeq }).where(eq(conversations.id, id));
}

/** What the auto trigger needs to know about a conversation (SPEC §5.1). */
export function triggerStateOf(row: ConversationRow, hasActiveJob: boolean): TriggerState {
  return {
    activeTokens: row.activeTokens,
    reportedInputTokens: row.reportedInputTokens,
    contextLimit: row.contextLimit,
    activeMessages: row.messageCount,
    lastSeq: row.nextSeq - 1,
    lastCompactedSeq: row.lastCompactedSeq,
    autoPausedUntilSeq: row.autoPausedUntilSeq,
    hasActiveJob,
  };
}
