import { and, desc, eq, inArray, lt, ne, sql } from 'drizzle-orm';

import type { DbOrTx } from '../client.js';
import { preparedPerHandle } from '../prepared.js';
import { ACTIVE_JOB_STATUSES, compactionJobs, conversations, type JobStatus, type JobTrigger, tenants } from '../schema.js';

export type JobRow = typeof compactionJobs.$inferSelect;
export type JobWithConversation = JobRow & { conversationExternalId: string };

const withConversation = {
  job: compactionJobs,
  conversationExternalId: conversations.externalId,
};

/**
 * Inserts a queued job; null when the conversation already has an active one (the partial
 * unique index is the guard, so concurrent requests cannot both win).
 */
export async function insertJob(
  db: DbOrTx,
  params: {
    tenantId: string;
    conversationId: string;
    trigger: JobTrigger;
    options: Record<string, unknown>;
    idempotencyKey?: string | undefined;
  },
): Promise<JobRow | null> {
  const [row] = await db
    .insert(compactionJobs)
    .values({ ...params, idempotencyKey: params.idempotencyKey ?? null })
    .onConflictDoNothing()
    .returning();
  return row ?? null;
}

/** The conversation's active compaction (consolidations run beside it and are not returned). */
export async function findActiveJob(db: DbOrTx, conversationId: string): Promise<JobRow | null> {
  const [row] = await db
    .select()
    .from(compactionJobs)
    .where(
      and(
        eq(compactionJobs.conversationId, conversationId),
        inArray(compactionJobs.status, [...ACTIVE_JOB_STATUSES]),
        ne(compactionJobs.trigger, 'consolidate' satisfies JobTrigger),
      ),
    );
  return row ?? null;
}

const jobById = preparedPerHandle((db) =>
  db
    .select()
    .from(compactionJobs)
    .where(eq(compactionJobs.id, sql.placeholder('id')))
    .prepare('job_by_id'),
);

export async function getJob(db: DbOrTx, id: string): Promise<JobRow | null> {
  const [row] = await jobById(db).execute({ id });
  return row ?? null;
}

const jobWithConversation = preparedPerHandle((db) =>
  db
    .select({ job: compactionJobs, conversation: conversations, tenantPolicy: tenants.policy })
    .from(compactionJobs)
    .innerJoin(conversations, eq(conversations.id, compactionJobs.conversationId))
    .innerJoin(tenants, eq(tenants.id, conversations.tenantId))
    .where(eq(compactionJobs.id, sql.placeholder('id')))
    .prepare('job_with_conversation'),
);

/** A job with its conversation and its tenant's policy, in one query (what every step starts from). */
export async function getJobWithConversation(db: DbOrTx, id: string) {
  const [row] = await jobWithConversation(db).execute({ id });
  return row ?? null;
}

const jobOfTenant = preparedPerHandle((db) =>
  db
    .select(withConversation)
    .from(compactionJobs)
    .innerJoin(conversations, eq(conversations.id, compactionJobs.conversationId))
    .where(and(eq(compactionJobs.id, sql.placeholder('id')), eq(compactionJobs.tenantId, sql.placeholder('tenantId'))))
    .prepare('job_of_tenant'),
);

export async function getJobForTenant(db: DbOrTx, tenantId: string, id: string): Promise<JobWithConversation | null> {
  const [row] = await jobOfTenant(db).execute({ id, tenantId });
  return row ? { ...row.job, conversationExternalId: row.conversationExternalId } : null;
}

/** Jobs by id in one query, any tenant (callers checked the tenant when they first read each): long-poll wake-ups. */
export async function getJobsByIds(db: DbOrTx, ids: readonly string[]): Promise<JobWithConversation[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .select(withConversation)
    .from(compactionJobs)
    .innerJoin(conversations, eq(conversations.id, compactionJobs.conversationId))
    // one array parameter, however many waiters (drizzle's inArray would send one parameter per id)
    .where(sql`${compactionJobs.id} = any(${sql.param([...ids])}::uuid[])`);
  return rows.map((row) => ({ ...row.job, conversationExternalId: row.conversationExternalId }));
}

export async function listJobs(db: DbOrTx, conversationId: string, options: { limit: number; before?: Date | undefined }) {
  const where = options.before
    ? and(eq(compactionJobs.conversationId, conversationId), lt(compactionJobs.createdAt, options.before))
    : eq(compactionJobs.conversationId, conversationId);
  return db.select().from(compactionJobs).where(where).orderBy(desc(compactionJobs.createdAt)).limit(options.limit);
}

/**
 * Moves a job to `status` only from one of `from` (compare-and-set), so a cancelled or
 * finished job is never resurrected by a late step. Returns the row, or null if it moved.
 */
export async function transitionJob(
  db: DbOrTx,
  id: string,
  from: readonly JobStatus[],
  patch: Partial<
    Pick<JobRow, 'status' | 'plan' | 'policy' | 'progress' | 'result' | 'error' | 'watermark' | 'startedAt' | 'finishedAt' | 'attempts'>
  >,
): Promise<JobRow | null> {
  const [row] = await db
    .update(compactionJobs)
    .set({ ...patch, updatedAt: sql`now()` })
    .where(and(eq(compactionJobs.id, id), inArray(compactionJobs.status, [...from])))
    .returning();
  return row ?? null;
}

/** Cancels a job that has not started committing; null when it is past that point. */
export async function cancelJob(db: DbOrTx, id: string): Promise<JobRow | null> {
  return transitionJob(db, id, ['queued', 'planning', 'summarizing', 'resummarizing'], {
    status: 'cancelled',
    finishedAt: new Date(),
    error: { code: 'CANCELLED', message: 'cancelled on request' },
  });
}

/** Non-terminal jobs not touched for `idleMs` (candidates for the reconciler). */
export async function listStaleActiveJobs(db: DbOrTx, idleMs: number, limit = 100): Promise<JobRow[]> {
  return db
    .select()
    .from(compactionJobs)
    .where(
      and(
        inArray(compactionJobs.status, [...ACTIVE_JOB_STATUSES]),
        lt(compactionJobs.updatedAt, sql`now() - make_interval(secs => ${idleMs / 1000})`),
      ),
    )
    .orderBy(compactionJobs.updatedAt)
    .limit(limit);
}

export async function touchJob(db: DbOrTx, id: string): Promise<void> {
  await db
    .update(compactionJobs)
    .set({ updatedAt: sql`now()` })
    .where(eq(compactionJobs.id, id));
}

/** Records a step's error on the job row without changing its status (a later attempt may still succeed). */
export async function recordJobError(db: DbOrTx, id: string, error: { code: string; message: string }): Promise<void> {
  await db.update(compactionJobs).set({ error }).where(eq(compactionJobs.id, id));
}
