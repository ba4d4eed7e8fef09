import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { getConversation } from '../../db/repos/conversations.js';
import { recordJobEvent } from '../../db/repos/job-outbox.js';
import { cancelJob, getJobForTenant, listJobs, type JobWithConversation } from '../../db/repos/jobs.js';
import { ACTIVE_JOB_STATUSES } from '../../db/schema.js';
import type { Db } from '../../db/client.js';
import { AppError, notFound } from '../../lib/errors.js';
import type { ApiDeps } from '../deps.js';
import { ConversationParamsSchema, errorResponses, ProblemSchema, UuidParamsSchema } from '../schemas/common.js';
import { JobSchema, JobWaitQuerySchema, ListJobsQuerySchema, ListJobsResponseSchema } from '../schemas/jobs.js';
import { revertCompaction } from '../revert-compaction.js';
import { toJobView } from '../views.js';

const POLL_INTERVAL_MS = 200;

async function requireJob(db: Db, tenantId: string, id: string): Promise<JobWithConversation> {
  const job = await getJobForTenant(db, tenantId, id);
  if (!job) throw notFound('job', id);
  return job;
}

/** Long-poll: re-reads the row until it is terminal, the wait ends or the client goes away. */
async function waitForTerminal(db: Db, tenantId: string, job: JobWithConversation, waitSeconds: number, closed: () => boolean) {
  const deadline = Date.now() + waitSeconds * 1000;
  let current = job;
  while (ACTIVE_JOB_STATUSES.includes(current.status) && Date.now() < deadline && !closed()) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_INTERVAL_MS, Math.max(0, deadline - Date.now()))));
    current = await requireJob(db, tenantId, job.id);
  }
  return current;
}

export function jobRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/v1/jobs/:id',
      {
        schema: {
          tags: ['compactions'],
          summary: 'Job status, progress, result and error; `?wait=S` long-polls for a terminal status',
          params: UuidParamsSchema,
          querystring: JobWaitQuerySchema,
          response: { 200: JobSchema, ...errorResponses },
        },
      },
      async (request) => {
        let job = await requireJob(deps.db, request.tenantId, request.params.id);
        if (request.query.wait) job = await waitForTerminal(deps.db, request.tenantId, job, request.query.wait, () => request.raw.destroyed);
        return toJobView(job, job.conversationExternalId);
      },
    );

    app.delete(
      '/v1/jobs/:id',
      {
        schema: {
          tags: ['compactions'],
          summary: 'Cancel a job that has not started committing (409 afterwards)',
          params: UuidParamsSchema,
          response: { 200: JobSchema, 409: ProblemSchema, ...errorResponses },
        },
      },
      async (request) => {
        const job = await requireJob(deps.db, request.tenantId, request.params.id);
        // the cancellation and its event (compaction.cancelled) commit together: the outbox
        const outcome = await deps.db.transaction(async (tx) => {
          const row = await cancelJob(tx, job.id);
          return row ? { row, deliveryId: await recordJobEvent(tx, row) } : null;
        });
        if (!outcome) {
          throw new AppError('JOB_NOT_CANCELLABLE', `job ${job.id} is ${job.status === 'committing' ? 'committing' : `already ${job.status}`}`, { status: 409 });
        }
        await deps.compactions.cancel(job.id).catch((error: unknown) => request.log.warn({ err: error, jobId: job.id }, 'cancel broadcast failed'));
        if (outcome.deliveryId !== null && deps.webhookDeliveries) {
          // after the commit; if Redis refuses, the stale-delivery sweep enqueues it later
          await deps.webhookDeliveries
            .enqueue(outcome.deliveryId)
            .catch((error: unknown) => request.log.warn({ err: error, deliveryId: outcome.deliveryId }, 'webhook enqueue failed; the sweep will retry'));
        }
        return toJobView(outcome.row, job.conversationExternalId);
      },
    );

    app.post(
      '/v1/jobs/:id/revert',
      {
        schema: {
          tags: ['compactions'],
          summary: "Undo a compaction: restores its originals and the previous clip-archive (409 unless it is the conversation's latest)",
          params: UuidParamsSchema,
          response: { 200: JobSchema, 409: ProblemSchema, ...errorResponses },
        },
      },
      async (request) => {
        const job = await requireJob(deps.db, request.tenantId, request.params.id);
        const reverted = await revertCompaction(deps.db, job);
        return toJobView(reverted, job.conversationExternalId);
      },
    );

    app.get(
      '/v1/conversations/:id/jobs',
      {
        schema: {
          tags: ['compactions'],
          summary: 'Job history of a conversation, newest first',
          params: ConversationParamsSchema,
          querystring: ListJobsQuerySchema,
          response: { 200: ListJobsResponseSchema, ...errorResponses },
        },
      },
      async (request) => {
        const conversation = await getConversation(deps.db, request.tenantId, request.params.id);
        if (!conversation) throw notFound('conversation', request.params.id);
        const { limit, before } = request.query;
        const rows = await listJobs(deps.db, conversation.id, { limit, before: before ? new Date(before) : undefined });
        const last = rows.at(-1);
        return { jobs: rows.map((row) => toJobView(row, conversation.externalId)), nextBefore: rows.length === limit && last ? last.createdAt.toISOString() : null };
      },
    );
  };
}
