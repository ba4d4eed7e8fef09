import { randomUUID } from 'node:crypto';

import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';

import { type ListedConversation, listTenantConversations } from '../../db/repos/conversation-list.js';
import { getConversation, getLastJob, insertConversation } from '../../db/repos/conversations.js';
import { AppError, notFound } from '../../lib/errors.js';
import { contextLimitFor, DEFAULT_CONTEXT_TOKENS } from '../../llm/models.js';
import { checkPolicyAsWhole, checkSummarizerModel } from '../conversation-settings.js';
import type { ApiDeps } from '../deps.js';
import { runIdempotent } from '../idempotency.js';
import { ConversationParamsSchema, errorResponses, IdempotencyHeadersSchema, ProblemSchema } from '../schemas/common.js';
import {
  ConversationSchema,
  CreateConversationBodySchema,
  decodeListCursor,
  encodeListCursor,
  ListConversationsQuerySchema,
  ListConversationsResponseSchema,
} from '../schemas/conversations.js';
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
        const policy = body.policy ?? {};
        checkSummarizerModel(deps.config, policy.model, 'body.policy.model');
        await checkPolicyAsWhole(deps.db, request.tenantId, policy, 'body.policy');
        const outcome = await runIdempotent(
          deps.db,
          { tenantId: request.tenantId, key: request.headers['idempotency-key'], route: 'POST /v1/conversations', request: body },
          async (tx) => {
            const parent = body.parentId === undefined ? null : await getConversation(tx, request.tenantId, body.parentId);
            if (body.parentId !== undefined && !parent) {
              throw new AppError('PARENT_NOT_FOUND', `conversation ${body.parentId} does not exist`, {
                status: 400,
                field: 'body.parentId',
              });
            }
            const row = await insertConversation(tx, {
              tenantId: request.tenantId,
              externalId: body.id ?? randomUUID(),
              model: body.model ?? null,
              contextLimit: body.contextLimit ?? (body.model ? contextLimitFor(body.model) : DEFAULT_CONTEXT_TOKENS),
              policy: policy,
              metadata: body.metadata ?? {},
              parentId: parent?.id ?? null,
            });
            if (!row)
              throw new AppError('CONVERSATION_EXISTS', `conversation ${body.id} already exists`, { status: 409, field: 'body.id' });
            return { status: 201, body: toConversationView(row, null), headers: { location: `/v1/conversations/${row.externalId}` } };
          },
        );
        return reply
          .status(outcome.status as 201)
          .headers(outcome.headers ?? {})
          .send(outcome.body);
      },
    );

    app.get(
      '/v1/conversations',
      {
        schema: {
          tags: ['conversations'],
          summary: 'The tenant’s conversations, oldest first, cursor-paginated; filtered by creator, parent or last update',
          querystring: ListConversationsQuerySchema,
          response: { 200: ListConversationsResponseSchema, ...errorResponses },
        },
      },
      async (request) => {
        const { limit, cursor, createdBy, parentId, updatedSince } = request.query;
        const after = cursor === undefined ? null : decodeListCursor(cursor);
        // one row past the page says whether another page follows
        const rows = await listTenantConversations(deps.db, request.tenantId, {
          limit: limit + 1,
          ...(after ? { after } : {}),
          ...(createdBy === undefined ? {} : { createdBy }),
          ...(parentId === undefined ? {} : { parentExternalId: parentId }),
          ...(updatedSince === undefined ? {} : { updatedSince: new Date(updatedSince) }),
        });
        const page = rows.slice(0, limit);
        const last = page.at(-1);
        return {
          conversations: page.map(toSummary),
          nextCursor: rows.length > limit && last ? encodeListCursor({ createdAt: last.cursorAt, externalId: last.externalId }) : null,
        };
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
  };
}

function toSummary(row: ListedConversation) {
  return {
    id: row.externalId,
    model: row.model,
    contextLimit: row.contextLimit,
    activeTokens: row.activeTokens,
    activeMessages: row.activeMessages,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    createdBy: row.createdBy,
    parentId: row.parentExternalId,
  };
}
