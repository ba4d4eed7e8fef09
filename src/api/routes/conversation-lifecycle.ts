import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';

import {
  type ConversationChanges,
  eraseConversation,
  lockConversation,
  updateConversation,
} from '../../db/repos/conversation-lifecycle.js';
import { getLastJob } from '../../db/repos/conversations.js';
import { findActiveJob } from '../../db/repos/jobs.js';
import { recordTenantWebhookEvent } from '../../db/repos/webhooks.js';
import { AppError, notFound } from '../../lib/errors.js';
import { contextLimitFor, DEFAULT_CONTEXT_TOKENS } from '../../llm/models.js';
import { checkPolicyAsWhole, checkSummarizerModel } from '../conversation-settings.js';
import type { ApiDeps } from '../deps.js';
import { ConversationParamsSchema, errorResponses, ProblemSchema } from '../schemas/common.js';
import { ConversationSchema, type UpdateConversationBody, UpdateConversationBodySchema } from '../schemas/conversations.js';
import { toConversationView } from '../views.js';

const tags = ['conversations'];

/** PATCH and DELETE /v1/conversations/:id: change a conversation's settings, or erase it. */
export function conversationLifecycleRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.patch(
      '/v1/conversations/:id',
      {
        schema: {
          tags,
          summary: 'Change the model, context limit, policy or metadata',
          description:
            'The body is validated as a whole, like at create: the new policy overrides merged over the tenant policy and the ' +
            'defaults must satisfy the cross-field rules, and a summarizer model must be served by a configured provider. ' +
            '`policy` and `metadata` replace the stored values. A compaction already running keeps the policy it started with.',
          params: ConversationParamsSchema,
          body: UpdateConversationBodySchema,
          response: { 200: ConversationSchema, ...errorResponses },
        },
      },
      async (request) => {
        const { body } = request;
        if (body.policy !== undefined) {
          checkSummarizerModel(deps.config, body.policy.model, 'body.policy.model');
          await checkPolicyAsWhole(deps.db, request.tenantId, body.policy, 'body.policy');
        }
        const row = await deps.db.transaction(async (tx) => {
          const current = await lockConversation(tx, request.tenantId, request.params.id);
          if (!current) throw notFound('conversation', request.params.id);
          return updateConversation(tx, current.id, changesOf(body));
        });
        return toConversationView(row, await getLastJob(deps.db, row.id));
      },
    );

    app.delete(
      '/v1/conversations/:id',
      {
        schema: {
          tags,
          summary: 'Erase the conversation and everything kept for it (409 while a compaction is active: cancel it first)',
          description:
            'In one transaction: the active and archived messages (and the archive search index), batches, compaction jobs and ' +
            'their chunk results, the conversation’s webhook and delivery log, and the idempotency records of its requests. ' +
            'While a compaction is active the answer is 409 COMPACTION_ACTIVE: cancel it (DELETE /v1/jobs/:id), then delete. ' +
            'The tenant webhook, when set, receives `conversation.deleted`.',
          params: ConversationParamsSchema,
          response: { 204: z.null(), 409: ProblemSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const deliveryId = await deps.db.transaction(async (tx) => {
          const row = await lockConversation(tx, request.tenantId, request.params.id);
          if (!row) throw notFound('conversation', request.params.id);
          const active = await findActiveJob(tx, row.id);
          if (active) {
            throw new AppError(
              'COMPACTION_ACTIVE',
              `compaction ${active.id} is ${active.status}: cancel it (DELETE /v1/jobs/${active.id}), then delete the conversation`,
              {
                status: 409,
              },
            );
          }
          const recorded = await recordTenantWebhookEvent(tx, {
            tenantId: row.tenantId,
            conversationExternalId: row.externalId,
            type: 'conversation.deleted',
            data: { messageCount: row.messageCount, compactionCount: row.compactionCount, createdAt: row.createdAt.toISOString() },
          });
          await eraseConversation(tx, row);
          return recorded;
        });
        if (deliveryId !== null && deps.webhookDeliveries) {
          // After commit; if Redis is down the stale-delivery sweep enqueues it later.
          await deps.webhookDeliveries
            .enqueue(deliveryId)
            .catch((error: unknown) => request.log.warn({ err: error, deliveryId }, 'webhook enqueue failed; the sweep will retry'));
        }
        return reply.status(204).send(null);
      },
    );
  };
}

/** A new session model without a context limit takes that model's limit (as at create). */
function changesOf(body: UpdateConversationBody): ConversationChanges {
  const changes: ConversationChanges = {};
  if (body.model !== undefined) changes.model = body.model;
  if (body.contextLimit !== undefined) changes.contextLimit = body.contextLimit;
  else if (body.model !== undefined) changes.contextLimit = body.model === null ? DEFAULT_CONTEXT_TOKENS : contextLimitFor(body.model);
  if (body.policy !== undefined) changes.policy = body.policy;
  if (body.metadata !== undefined) changes.metadata = body.metadata;
  return changes;
}
