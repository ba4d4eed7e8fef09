import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';

import { renderAnthropicContextWithNative, renderOpenAIContext, renderResponsesContext } from '../../compaction/context/index.js';
import type { Db } from '../../db/client.js';
import { type ConversationRow, getConversation } from '../../db/repos/conversations.js';
import { activeHistoryOf, listActiveMessages } from '../../db/repos/messages.js';
import { autoTriggerInputs } from '../../db/repos/tenants.js';
import { notFound } from '../../lib/errors.js';
import { prepareAppendOffLoop, storeAppend } from '../append-messages.js';
import type { ApiDeps, AppendEffects } from '../deps.js';
import { runIdempotent } from '../idempotency.js';
import { ConversationParamsSchema, errorResponses, IdempotencyHeadersSchema, ProblemSchema } from '../schemas/common.js';
import {
  AppendBodySchema,
  type AppendResponse,
  AppendResponseSchema,
  ContextBodySchema,
  ContextQuerySchema,
  ListMessagesQuerySchema,
  ListMessagesResponseSchema,
} from '../schemas/messages.js';
import { toMessageView } from '../views.js';

async function requireConversation(db: Db, tenantId: string, id: string): Promise<ConversationRow> {
  const row = await getConversation(db, tenantId, id);
  if (!row) throw notFound('conversation', id);
  return row;
}

export function messageRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/v1/conversations/:id/messages',
      {
        schema: {
          tags: ['messages'],
          summary: 'Append 1..1000 messages (Anthropic or OpenAI format)',
          params: ConversationParamsSchema,
          headers: IdempotencyHeadersSchema,
          body: AppendBodySchema,
          response: { 201: AppendResponseSchema, 413: ProblemSchema, 422: ProblemSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const conversation = await requireConversation(deps.db, request.tenantId, request.params.id);
        const prepared = await prepareAppendOffLoop(request.body, {
          countTokens: deps.countTokens,
          countTokensOffLoop: deps.countTokensOffLoop,
          offLoopThreads: deps.offLoopThreads,
          onOffLoopFailure: (error) => request.log.warn({ err: error }, 'token count thread failed; counted inline'),
          maxMessageBytes: deps.config.limits.maxMessageBytes,
        });
        const effects: AppendEffects = { webhookDeliveryIds: [], idleCheckDelayMs: null };
        const outcome = await runIdempotent<AppendResponse>(
          deps.db,
          {
            tenantId: request.tenantId,
            key: request.headers['idempotency-key'],
            route: `POST /v1/conversations/${conversation.externalId}/messages`,
            request: request.body,
          },
          async (tx) => {
            // the trigger's read joins the append's pipeline (it reads neither the rows nor the counters)
            const [stored, triggerInputs] = await Promise.all([
              storeAppend(tx, conversation, prepared),
              autoTriggerInputs(tx, conversation),
            ]);
            const compaction = await deps.afterAppend(tx, stored.conversation, effects, {
              autoCompact: request.body.autoCompact,
              quotas: deps.config.quotas,
              triggerInputs,
            });
            return {
              status: 201,
              body: {
                messages: stored.inserted,
                activeTokens: stored.conversation.activeTokens,
                compaction,
                ...(effects.compactionDeferred ? { compactionDeferred: effects.compactionDeferred } : {}),
              },
            };
          },
        );
        if (!outcome.replayed && deps.onAppendCommitted) {
          // Webhook deliveries are already in Postgres (the sweep re-enqueues them); a missed
          // idle re-arm is caught up by the next append. Neither fails the append.
          try {
            await deps.onAppendCommitted(conversation.id, effects);
          } catch (error) {
            request.log.warn({ err: error, conversationId: conversation.externalId }, 'post-append effects failed');
          }
        }
        const triggered = outcome.body.compaction;
        if (triggered?.status === 'queued') {
          await deps.compactions
            .enqueue({ id: triggered.id, tenantId: request.tenantId })
            .catch((error: unknown) => request.log.warn({ err: error, jobId: triggered.id }, 'enqueue failed; the reconciler will retry'));
        }
        return reply.status(outcome.status as 201).send(outcome.body);
      },
    );

    app.get(
      '/v1/conversations/:id/messages',
      {
        schema: {
          tags: ['messages'],
          summary: 'The active history, paginated by seq',
          params: ConversationParamsSchema,
          querystring: ListMessagesQuerySchema,
          response: { 200: ListMessagesResponseSchema, ...errorResponses },
        },
      },
      async (request) => {
        const conversation = await requireConversation(deps.db, request.tenantId, request.params.id);
        const { after, limit } = request.query;
        const rows = await listActiveMessages(deps.db, conversation.id, { ...(after === undefined ? {} : { after }), limit });
        const last = rows[rows.length - 1];
        return { messages: rows.map(toMessageView), nextAfter: rows.length === limit && last ? last.seq : null };
      },
    );

    app.get(
      '/v1/conversations/:id/context',
      {
        schema: {
          tags: ['messages'],
          summary: 'Ready-to-send context: Anthropic (system merged), OpenAI (system messages) or the Responses API (`input` items)',
          params: ConversationParamsSchema,
          querystring: ContextQuerySchema,
          response: { 200: ContextBodySchema, ...errorResponses },
        },
      },
      async (request) => {
        const history = await activeHistoryOf(deps.db, request.tenantId, request.params.id);
        if (history === null) throw notFound('conversation', request.params.id);
        if (request.query.format === 'responses') return renderResponsesContext(history, request.query.model);
        if (request.query.format === 'openai')
          return renderOpenAIContext(history) as unknown as { messages: Array<Record<string, unknown>> };
        // a provider's own compaction opens the context for the model that made it (SPEC §5.10)
        const { context, beta } = renderAnthropicContextWithNative(history, request.query.model);
        return { ...(context as { system?: string; messages: Array<Record<string, unknown>> }), ...(beta ? { anthropicBeta: beta } : {}) };
      },
    );
  };
}
