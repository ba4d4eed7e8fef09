import { and, asc, desc, eq, getTableColumns, gt, isNotNull, isNull, lte, type SQL, sql } from 'drizzle-orm';

import type { DbOrTx } from '../client.js';
import { batches, compactionJobs, conversations, messages, tenants } from '../schema.js';
import type { BatchRow } from './batches.js';
import type { ConversationRow } from './conversations.js';
import type { JobWithConversation } from './jobs.js';

/**
 * The reads of the inspector (`/inspect`, SPEC §6.2). Who may see what is decided by a
 * scope: one tenant (a tenant key) or every tenant (the admin token). Every list is bounded.
 */
export type InspectScope = { tenantId: string } | { allTenants: true };

/**
 * A batch as the pages list it: without its ledger and identifiers, which grow with the span
 * (a consolidation of a long conversation carries megabytes) and are read only for the live batches.
 */
const { ledger: _ledger, identifiers: _identifiers, ...listedBatchColumns } = getTableColumns(batches);
export type ListedBatch = Omit<BatchRow, 'ledger' | 'identifiers'>;

const inScope = (scope: InspectScope): SQL | undefined => ('tenantId' in scope ? eq(conversations.tenantId, scope.tenantId) : undefined);

export interface ConversationListItem {
  conversation: ConversationRow;
  tenantName: string;
  lastJob: { id: string; status: string; trigger: string; createdAt: Date } | null;
}

/**
 * Conversations, most recently updated first; `search` is a case-insensitive fragment of the
 * id (`%` and `_` literal). The last job is one index lookup per listed row (lateral join).
 */
export async function listConversations(
  db: DbOrTx,
  scope: InspectScope,
  params: { search?: string; limit: number },
): Promise<ConversationListItem[]> {
  const conditions: SQL[] = [];
  const scoped = inScope(scope);
  if (scoped) conditions.push(scoped);
  if (params.search) {
    const pattern = `%${params.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    conditions.push(sql`${conversations.externalId} ilike ${pattern}`);
  }
  const rows = await db
    .select({
      conversation: getTableColumns(conversations),
      tenantName: tenants.name,
      lastJob: sql<{ id: string; status: string; trigger: string; created_at: string } | null>`(
        select json_build_object('id', j.id, 'status', j.status, 'trigger', j.trigger, 'created_at', j.created_at)
          from compaction_jobs j where j.conversation_id = ${conversations.id}
         order by j.created_at desc limit 1)`,
    })
    .from(conversations)
    .innerJoin(tenants, eq(tenants.id, conversations.tenantId))
    .where(conditions.length > 0 ? and(...conditions) : undefined)
    .orderBy(desc(conversations.updatedAt))
    .limit(params.limit);
  return rows.map((row) => ({
    conversation: row.conversation,
    tenantName: row.tenantName,
    lastJob: row.lastJob
      ? { id: row.lastJob.id, status: row.lastJob.status, trigger: row.lastJob.trigger, createdAt: new Date(row.lastJob.created_at) }
      : null,
  }));
}

/**
 * A conversation by its client id. With every tenant in scope, `tenantId` narrows it; an id
 * two tenants share without it reads as ambiguous (the caller lists the choices).
 */
export async function findConversation(
  db: DbOrTx,
  scope: InspectScope,
  externalId: string,
  tenantId?: string,
): Promise<{ found: ConversationRow } | { ambiguous: ConversationRow[] } | null> {
  const conditions: SQL[] = [eq(conversations.externalId, externalId)];
  const scoped = inScope(scope);
  if (scoped) conditions.push(scoped);
  else if (tenantId) conditions.push(eq(conversations.tenantId, tenantId));
  const rows = await db
    .select()
    .from(conversations)
    .where(and(...conditions))
    .limit(20);
  if (rows.length === 0) return null;
  return rows.length === 1 ? { found: rows[0] as ConversationRow } : { ambiguous: rows };
}

export async function findJob(
  db: DbOrTx,
  scope: InspectScope,
  id: string,
): Promise<(JobWithConversation & { conversationTenantId: string }) | null> {
  const [row] = await db
    .select({ job: compactionJobs, conversationExternalId: conversations.externalId, conversationTenantId: conversations.tenantId })
    .from(compactionJobs)
    .innerJoin(conversations, eq(conversations.id, compactionJobs.conversationId))
    .where(and(eq(compactionJobs.id, id), inScope(scope)));
  return row ? { ...row.job, conversationExternalId: row.conversationExternalId, conversationTenantId: row.conversationTenantId } : null;
}

export async function findBatch(
  db: DbOrTx,
  scope: InspectScope,
  id: string,
): Promise<(BatchRow & { conversationExternalId: string; conversationTenantId: string }) | null> {
  const [row] = await db
    .select({ ...getTableColumns(batches), conversationExternalId: conversations.externalId, conversationTenantId: conversations.tenantId })
    .from(batches)
    .innerJoin(conversations, eq(conversations.id, batches.conversationId))
    .where(and(eq(batches.id, id), inScope(scope)));
  return row ?? null;
}

/** One page of the active history: `limit` messages after `after`, by seq (the unique index serves it). */
export async function activePage(db: DbOrTx, conversationId: string, after: number, limit: number) {
  return db
    .select()
    .from(messages)
    .where(and(eq(messages.conversationId, conversationId), gt(messages.seq, after)))
    .orderBy(asc(messages.seq))
    .limit(limit);
}

/** The level-0 batches whose first original falls in (after, through]: the archived stretches of a history page. */
export async function batchesStartingIn(
  db: DbOrTx,
  conversationId: string,
  after: number,
  through: number | null,
  limit: number,
): Promise<ListedBatch[]> {
  const first = sql<number>`${batches.seqs}[1]`;
  return db
    .select(listedBatchColumns)
    .from(batches)
    .where(
      and(
        eq(batches.conversationId, conversationId),
        eq(batches.level, 0),
        gt(first, after),
        through === null ? undefined : lte(first, through),
      ),
    )
    .orderBy(first, asc(batches.createdAt))
    .limit(limit);
}

/**
 * The conversation's active clip-archive: the summary message the agent continues from. There
 * is at most one, at the head of the history (the first seq it replaced), so the seq index
 * finds it in a step; a conversation never compacted is not searched at all.
 */
export async function activeClipArchive(db: DbOrTx, conversation: Pick<ConversationRow, 'id' | 'compactionCount'>) {
  if (conversation.compactionCount === 0) return null;
  const [row] = await db
    .select()
    .from(messages)
    .where(and(eq(messages.conversationId, conversation.id), eq(messages.kind, 'clip_archive')))
    .orderBy(asc(messages.seq))
    .limit(1);
  return row ?? null;
}

/**
 * The batches of the batch tree, bounded: the live ones (what the clip-archive is made of)
 * first, higher levels first, then by first seq; with `total`, how many there are in all.
 */
export async function treeBatches(db: DbOrTx, conversationId: string, limit: number): Promise<{ rows: ListedBatch[]; total: number }> {
  const [rows, [count]] = await Promise.all([
    db
      .select(listedBatchColumns)
      .from(batches)
      .where(eq(batches.conversationId, conversationId))
      .orderBy(sql`${batches.supersededBy} is not null`, desc(batches.level), sql`${batches.seqs}[1]`)
      .limit(limit),
    db
      .select({ n: sql<number>`count(*)::int` })
      .from(batches)
      .where(eq(batches.conversationId, conversationId)),
  ]);
  return { rows, total: count?.n ?? rows.length };
}

/** The conversation's jobs, oldest first (the gauge reads their tokens before and after), bounded to the latest `limit`. */
export async function jobsForGauge(db: DbOrTx, conversationId: string, limit: number) {
  const rows = await db
    .select()
    .from(compactionJobs)
    .where(eq(compactionJobs.conversationId, conversationId))
    .orderBy(desc(compactionJobs.createdAt))
    .limit(limit);
  return rows.reverse();
}

/** The ledgers of the live batches, oldest first: merged, what the clip-archive's state section is rendered from. */
export async function liveLedgers(db: DbOrTx, conversationId: string) {
  const rows = await db
    .select({ ledger: batches.ledger })
    .from(batches)
    .where(and(eq(batches.conversationId, conversationId), isNull(batches.supersededBy), isNotNull(batches.ledger)))
    .orderBy(asc(batches.createdAt), sql`${batches.seqs}[1]`);
  return rows.map((row) => row.ledger).filter((ledger) => ledger !== null);
}
