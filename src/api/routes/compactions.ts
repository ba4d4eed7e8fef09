import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';

import { type ConversationRow, getConversation } from '../../db/repos/conversations.js';
import { findActiveJob, insertJob, type JobRow } from '../../db/repos/jobs.js';
import { conversationPolicy } from '../../db/repos/tenants.js';
import { AppError, notFound } from '../../lib/errors.js';
import { CompactionOptionsSchema } from '../../queue/job-options.js';
import { enforceCompactionQuota } from '../compaction-quota.js';
import { checkSummarizerModel } from '../conversation-settings.js';
import type { ApiDeps } from '../deps.js';
import { enforceAgentModelAccess } from '../gateway/model-access.js';
import { runIdempotent } from '../idempotency.js';
import { ConversationParamsSchema, errorResponses, IdempotencyHeadersSchema, ProblemSchema } from '../schemas/common.js';
import { JobSchema, type JobView } from '../schemas/jobs.js';
import { effectiveTokens } from '../views.js';
import { toJobView } from '../views.js';

export const CompactionBodySchema = CompactionOptionsSchema.extend({
  trigger: z.enum(['api', 'tool']).default('api').meta({ description: '"tool" when the agent called its compact tool' }),
});

export function compactionRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/v1/conversations/:id/compactions',
      {
        schema: {
          tags: ['compactions'],
          summary: 'Enqueue a compaction (202); an already active job is returned instead (200, deduplicated)',
          description:
            'A tenant over its quota of active compactions or of compactions started per minute gets a 429 with `retry-after` (seconds); no job is created.',
          params: ConversationParamsSchema,
          headers: IdempotencyHeadersSchema,
          // no body at all (fastify validates it as null) is "compact now with the defaults"
          body: CompactionBodySchema.prefault({}).nullable(),
          response: { 200: JobSchema, 202: JobSchema, 422: ProblemSchema, 429: ProblemSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const conversation = await getConversation(deps.db, request.tenantId, request.params.id);
        if (!conversation) throw notFound('conversation', request.params.id);
        const { trigger, ...options } = request.body ?? CompactionBodySchema.parse({});
        checkSummarizerModel(deps.config, options.model, 'body.model');
        if (options.agent) await enforceAgentModelAccess(deps.db, request.tenantId, options.agent);
        if (trigger === 'tool') await refuseSmallToolCompaction(deps, conversation);
        const key = request.headers['idempotency-key'];
        const outcome = await runIdempotent<JobView>(
          deps.db,
          {
            tenantId: request.tenantId,
            key,
            route: `POST /v1/conversations/${conversation.externalId}/compactions`,
            request: request.body,
          },
          async (tx) => {
            // An already active job is returned whatever the quotas: asking again creates nothing.
            const running = await findActiveJob(tx, conversation.id);
            if (running) return deduplicated(running, conversation.externalId);
            await enforceCompactionQuota(tx, request.tenantId, deps.config.quotas);
            const job = await insertJob(tx, {
              tenantId: request.tenantId,
              conversationId: conversation.id,
              trigger,
              options,
              idempotencyKey: key,
            });
            if (job) return { status: 202, body: toJobView(job, conversation.externalId), headers: { location: `/v1/jobs/${job.id}` } };
            const active = await findActiveJob(tx, conversation.id);
            // The active job finished between our insert and this read: the caller may simply retry.
            if (!active) throw new Error('active job vanished during deduplication');
            return deduplicated(active, conversation.externalId);
          },
        );
        if (outcome.status === 202) {
          // Enqueued after commit so a worker never sees a job row that is not there yet.
          // If Redis is unreachable the row stays `queued` and the reconciler enqueues it.
          await deps.compactions
            .enqueue({ id: outcome.body.id, tenantId: request.tenantId })
            .catch((error: unknown) =>
              request.log.warn({ err: error, jobId: outcome.body.id }, 'enqueue failed; the reconciler will retry'),
            );
        }
        return reply
          .status(outcome.status as 202)
          .headers(outcome.headers ?? {})
          .send(outcome.body);
      },
    );
  };
}

function deduplicated(active: JobRow, conversationExternalId: string) {
  return { status: 200, body: toJobView(active, conversationExternalId, true), headers: { location: `/v1/jobs/${active.id}` } };
}

/**
 * The agent's `compact` tool is refused below `toolMinTokens`: an agent that compacts a
 * short conversation only loses detail (SPEC §5.1, "not eligible below a minimum token count").
 */
async function refuseSmallToolCompaction(deps: ApiDeps, conversation: ConversationRow): Promise<void> {
  const policy = await conversationPolicy(deps.db, conversation);
  const tokens = effectiveTokens(conversation);
  if (tokens < policy.toolMinTokens) {
    throw new AppError(
      'COMPACTION_NOT_ELIGIBLE',
      `the conversation holds ${tokens} tokens; the compact tool needs at least ${policy.toolMinTokens}`,
      {
        status: 422,
        field: 'body.trigger',
      },
    );
  }
}
