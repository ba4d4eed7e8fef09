import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { PolicyOverrideSchema } from '../../config/policy.js';
import { z } from 'zod';
import { withConversationLock } from '../../db/locks.js';
import { deleteConversation, getConversation, getLastJob, insertConversation } from '../../db/repos/conversations.js';
import { findActiveJob } from '../../db/repos/jobs.js';
import { contextLimitFor, DEFAULT_CONTEXT_TOKENS } from '../../llm/models.js';
import { AppError, notFound } from '../../lib/errors.js';
import type { ApiDeps } from '../deps.js';
import { runIdempotent } from '../idempotency.js';
import { ConversationParamsSchema, errorResponses, IdempotencyHeadersSchema, ProblemSchema } from '../schemas/common.js';
import { ConversationSchema, CreateConversationBodySchema } from '../schemas/conversations.js';
import { toConversationView } from '../views.js';

export function conversationRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/v1/conversations',
      {
        schema: {
          tags: ['conversations'],
          summary: 'Create a conversation',
          headers: IdempotencyHeadersSchema,
          body: CreateConversationBodySchema,
          response: { 201: ConversationSchema, 409: ProblemSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const body = request.body;
        const policy = PolicyOverrideSchema.safeParse(body.policy ?? {});
        if (!policy.success) {
          const details = policy.error.issues.map((i) => ({ field: ['body', 'policy', ...i.path.map(String)].join('.'), message: i.message }));
          throw new AppError('INVALID_POLICY', details.map((d) => `${d.field}: ${d.message}`).join('; '), { status: 400, details });
        }
        const outcome = await runIdempotent(
          deps.db,
          { tenantId: request.tenantId, key: request.headers['idempotency-key'], route: 'POST /v1/conversations', request: body },
          async (tx) => {
            const row = await insertConversation(tx, {
              tenantId: request.tenantId,
              externalId: body.id ?? randomUUID(),
              model: body.model ?? null,
              contextLimit: body.contextLimit ?? (body.model ? contextLimitFor(body.model) : DEFAULT_CONTEXT_TOKENS),
              policy: policy.data as Record<string, unknown>,
              metadata: body.metadata ?? {},
            });
            if (!row) throw new AppError('CONVERSATION_EXISTS', `conversation ${body.id} already exists`, { status: 409, field: 'body.id' });
            return { status: 201, body: toConversationView(row, null), headers: { location: `/v1/conversations/${row.externalId}` } };
          },
        );
        return reply.status(outcome.status as 201).headers(outcome.headers ?? {}).send(outcome.body);
      },
    );

    app.get(
      '/v1/conversations/:id',
      {
        schema: {
          tags: ['conversations'],
          summary: 'Counts, active tokens, context usage and the last job',
          params: ConversationParamsSchema,
          response: { 200: ConversationSchema, ...errorResponses },
        },
      },
      async (request) => {
        const row = await getConversation(deps.db, request.tenantId, request.params.id);
        if (!row) throw notFound('conversation', request.params.id);
        return toConversationView(row, await getLastJob(deps.db, row.id));
      },
    );

    app.delete(
      '/v1/conversations/:id',
      {
        schema: {
          tags: ['conversations'],
          summary: 'Delete a conversation and everything it holds (409 while a compaction is active)',
          params: ConversationParamsSchema,
          response: { 204: z.null(), 409: ProblemSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        await deps.db.transaction(async (tx) => {
          const row = await getConversation(tx, request.tenantId, request.params.id);
          if (!row) throw notFound('conversation', request.params.id);
          // Appends and commits take this lock too: no job can start or finish while we look.
          await withConversationLock(tx, row.id);
          const active = await findActiveJob(tx, row.id);
          if (active) {
            throw new AppError('CONVERSATION_BUSY', `compaction job ${active.id} is ${active.status}; cancel it (DELETE /v1/jobs/${active.id}) or let it finish first`, {
              status: 409,
            });
          }
          await deleteConversation(tx, row);
        });
        return reply.status(204).send(null);
      },
    );
  };
}
