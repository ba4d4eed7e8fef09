import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';

import { countForgotten, type ForgottenCounts } from '../../compaction/recall/index.js';
import { DEFAULT_MAX_WAITERS_PER_TENANT } from '../../config/env.js';
import type { Db } from '../../db/client.js';
import { getConversation } from '../../db/repos/conversations.js';
import { loadForgotten } from '../../db/repos/forgotten.js';
import { recordJobEvent } from '../../db/repos/job-outbox.js';
import { cancelJob, getJobForTenant, type JobWithConversation, listJobs } from '../../db/repos/jobs.js';
import { AppError, notFound } from '../../lib/errors.js';
import type { Metrics } from '../../obs/metrics.js';
import type { ApiDeps } from '../deps.js';
import { createJobWaitersFor } from '../job-waiters.js';
import { revertCompaction } from '../revert-compaction.js';
import { ConversationParamsSchema, errorResponses, ProblemSchema, UuidParamsSchema } from '../schemas/common.js';
import { ForgottenResponseSchema, JobSchema, JobWaitQuerySchema, ListJobsQuerySchema, ListJobsResponseSchema } from '../schemas/jobs.js';
import { toJobView } from '../views.js';

async function requireJob(db: Db, tenantId: string, id: string): Promise<JobWithConversation> {
  const job = await getJobForTenant(db, tenantId, id);
  if (!job) throw notFound('job', id);
  return job;
}

/** Aborts when the client goes away before its answer is written (a response's `close` comes either way). */
function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => controller.abort());
  return controller.signal;
}

export function jobRoutes(deps: ApiDeps, metrics?: Pick<Metrics, 'jobWaiters'>): FastifyPluginAsyncZod {
  return async (app) => {
    const waiters =
      deps.jobWaiters ??
      createJobWaitersFor(deps.db, deps.sql, {
        logger: deps.logger,
        maxWaitersPerTenant: deps.config.longPoll?.maxWaitersPerTenant ?? DEFAULT_MAX_WAITERS_PER_TENANT,
      });
    // before the server waits for requests in flight: open long-polls answer now, not at their deadline
    if (!deps.jobWaiters) app.addHook('preClose', () => waiters.close());
    /** `compactd_job_waiters`: how many long-polls this process holds (the chaos suite waits for its burst to be in) */
    const waitCounted = async <T>(waiting: () => Promise<T>): Promise<T> => {
      metrics?.jobWaiters.inc();
      try {
        return await waiting();
      } finally {
        metrics?.jobWaiters.dec();
      }
    };

    app.get(
      '/v1/jobs/:id',
      {
        schema: {
          tags: ['compactions'],
          summary: 'Job status, progress, result and error; `?wait=S` long-polls for a terminal status',
          description:
            'A long-poll answers as soon as the job is terminal, else with its status at the end of the wait. ' +
            'A tenant may hold `COMPACTD_TENANT_MAX_WAITERS` long-polls open per API process; the next one gets a 429 with `retry-after`.',
          params: UuidParamsSchema,
          querystring: JobWaitQuerySchema,
          response: { 200: JobSchema, 429: ProblemSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { wait } = request.query;
        const job = wait
          ? await waitCounted(() =>
              waiters.wait({ tenantId: request.tenantId, jobId: request.params.id, waitMs: wait * 1000, signal: clientGone(reply) }),
            )
          : await getJobForTenant(deps.db, request.tenantId, request.params.id);
        if (!job) throw notFound('job', request.params.id);
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
          throw new AppError(
            'JOB_NOT_CANCELLABLE',
            `job ${job.id} is ${job.status === 'committing' ? 'committing' : `already ${job.status}`}`,
            { status: 409 },
          );
        }
        await deps.compactions
          .cancel(job.id)
          .catch((error: unknown) => request.log.warn({ err: error, jobId: job.id }, 'cancel broadcast failed'));
        if (outcome.deliveryId !== null && deps.webhookDeliveries) {
          // after the commit; if Redis refuses, the stale-delivery sweep enqueues it later
          await deps.webhookDeliveries
            .enqueue(outcome.deliveryId)
            .catch((error: unknown) =>
              request.log.warn({ err: error, deliveryId: outcome.deliveryId }, 'webhook enqueue failed; the sweep will retry'),
            );
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
      '/v1/jobs/:id/forgotten',
      {
        schema: {
          tags: ['compactions'],
          summary:
            "What the context no longer holds after this compaction: the span's paths, commands, error lines and ids now only in the archive, each with its recall search",
          description:
            "Recorded by the compaction's commit: names of the summarized span that neither the new clip-archive nor an active message " +
            'holds. `total` and `byKind` count them all; `names` lists up to 2000. `recorded` is false for a job that recorded nothing ' +
            '(not a completed compaction).',
          params: UuidParamsSchema,
          response: { 200: ForgottenResponseSchema, ...errorResponses },
        },
      },
      async (request) => {
        const job = await requireJob(deps.db, request.tenantId, request.params.id);
        const names = await loadForgotten(deps.db, job.id);
        // the job result counts every forgotten name; the record lists the first FORGOTTEN_MAX_NAMES
        const counts = (job.result?.['forgotten'] as ForgottenCounts | undefined) ?? countForgotten(names ?? []);
        const search = (name: string) =>
          `/v1/conversations/${encodeURIComponent(job.conversationExternalId)}/archive/search?q=${encodeURIComponent(name)}`;
        return {
          jobId: job.id,
          conversationId: job.conversationExternalId,
          recorded: names !== null,
          ...counts,
          names: (names ?? []).map((n) => ({ kind: n.kind, name: n.name, recall: search(n.name) })),
        };
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
        return {
          jobs: rows.map((row) => toJobView(row, conversation.externalId)),
          nextBefore: rows.length === limit && last ? last.createdAt.toISOString() : null,
        };
      },
    );
  };
}
