import { randomBytes } from 'node:crypto';

import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';

import { getConversation } from '../../db/repos/conversations.js';
import {
  deleteWebhookEndpoint,
  type DeliveryWithConversation,
  type EndpointScope,
  getWebhookEndpoint,
  listDeliveries,
  upsertWebhookEndpoint,
  type WebhookEndpointRow,
} from '../../db/repos/webhooks.js';
import { notFound } from '../../lib/errors.js';
import type { ApiDeps } from '../deps.js';
import { ConversationParamsSchema, errorResponses } from '../schemas/common.js';
import {
  ListDeliveriesQuerySchema,
  ListDeliveriesResponseSchema,
  type WebhookBody,
  WebhookBodySchema,
  type WebhookDeliveryView,
  WebhookSchema,
  type WebhookView,
} from '../schemas/webhooks.js';
import { assertWebhookTarget } from '../webhook-target.js';

const SECRET_PREFIX = 'whsec_';
/** Characters of a secret shown back (after the public `whsec_` of a generated one): enough to tell secrets apart, too few to help guess one. */
const SECRET_HINT_CHARS = 4;

/** `whsec_AbCd…` for a generated secret, `my-o…` for a client's own. */
export function secretHint(secret: string): string {
  const prefix = secret.startsWith(SECRET_PREFIX) ? SECRET_PREFIX : '';
  return `${prefix}${secret.slice(prefix.length, prefix.length + SECRET_HINT_CHARS)}…`;
}

function toWebhookView(row: WebhookEndpointRow, conversationExternalId: string | null, generatedSecret?: string): WebhookView {
  return {
    scope: row.conversationId === null ? 'tenant' : 'conversation',
    conversationId: conversationExternalId,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    secretHint: secretHint(row.secret),
    ...(generatedSecret === undefined ? {} : { secret: generatedSecret }),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function toDeliveryView(row: DeliveryWithConversation): WebhookDeliveryView {
  const payload = JSON.parse(row.body) as Record<string, unknown>;
  // `conversation.deleted` outlives its conversation: the envelope still names it.
  const envelopeConversation = typeof payload['conversationId'] === 'string' ? payload['conversationId'] : null;
  return {
    id: row.id,
    event: row.event,
    conversationId: row.conversationExternalId ?? envelopeConversation,
    url: row.url,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    attemptLog: row.attemptLog,
    payload,
    createdAt: row.createdAt.toISOString(),
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
  };
}

type ZodApp = Parameters<FastifyPluginAsyncZod>[0];
const tags = ['webhooks'];
const tenantScope = (tenantId: string): EndpointScope => ({ tenantId, conversationId: null });

/**
 * Webhook configuration, one per tenant and optionally one per conversation (which wins),
 * and the tenant's delivery log. Signing and retries: worker/webhooks.ts, processors/webhook.ts.
 */
export function webhookRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  return async (app) => {
    registerTenantWebhook(app, deps);
    registerConversationWebhook(app, deps);
    registerDeliveryLog(app, deps);
  };
}

/** Creates or updates (only for a target the service may reach); a new webhook without a secret gets a generated one, returned once. */
async function putWebhook(
  deps: ApiDeps,
  scope: EndpointScope,
  body: WebhookBody,
  conversationExternalId: string | null,
): Promise<WebhookView> {
  await assertWebhookTarget(body.url, { allow: deps.config.webhooks?.allow, resolveHost: deps.resolveHost });
  const existing = await getWebhookEndpoint(deps.db, scope);
  const generated = body.secret === undefined && !existing ? SECRET_PREFIX + randomBytes(32).toString('base64url') : undefined;
  const secret = body.secret ?? generated ?? (existing as WebhookEndpointRow).secret;
  const row = await upsertWebhookEndpoint(deps.db, { ...scope, url: body.url, secret, events: body.events ?? [], enabled: body.enabled });
  return toWebhookView(row, conversationExternalId, generated);
}

async function conversationScope(deps: ApiDeps, tenantId: string, id: string): Promise<EndpointScope> {
  const conversation = await getConversation(deps.db, tenantId, id);
  if (!conversation) throw notFound('conversation', id);
  return { tenantId, conversationId: conversation.id };
}

function registerTenantWebhook(app: ZodApp, deps: ApiDeps): void {
  app.put(
    '/v1/webhook',
    {
      schema: {
        tags,
        summary: 'Set the tenant webhook (every conversation without its own)',
        body: WebhookBodySchema,
        response: { 200: WebhookSchema, ...errorResponses },
      },
    },
    async (request) => putWebhook(deps, tenantScope(request.tenantId), request.body, null),
  );
  app.get(
    '/v1/webhook',
    { schema: { tags, summary: 'The tenant webhook', response: { 200: WebhookSchema, ...errorResponses } } },
    async (request) => {
      const row = await getWebhookEndpoint(deps.db, tenantScope(request.tenantId));
      if (!row) throw notFound('webhook', 'of this tenant');
      return toWebhookView(row, null);
    },
  );
  app.delete(
    '/v1/webhook',
    { schema: { tags, summary: 'Remove the tenant webhook', response: { 204: z.null(), ...errorResponses } } },
    async (request, reply) => {
      if (!(await deleteWebhookEndpoint(deps.db, tenantScope(request.tenantId)))) throw notFound('webhook', 'of this tenant');
      return reply.status(204).send(null);
    },
  );
}

function registerConversationWebhook(app: ZodApp, deps: ApiDeps): void {
  const params = ConversationParamsSchema;
  app.put(
    '/v1/conversations/:id/webhook',
    {
      schema: {
        tags,
        summary: 'Set the conversation’s own webhook (wins over the tenant’s)',
        params,
        body: WebhookBodySchema,
        response: { 200: WebhookSchema, ...errorResponses },
      },
    },
    async (request) =>
      putWebhook(deps, await conversationScope(deps, request.tenantId, request.params.id), request.body, request.params.id),
  );
  app.get(
    '/v1/conversations/:id/webhook',
    { schema: { tags, summary: 'The conversation’s own webhook', params, response: { 200: WebhookSchema, ...errorResponses } } },
    async (request) => {
      const row = await getWebhookEndpoint(deps.db, await conversationScope(deps, request.tenantId, request.params.id));
      if (!row) throw notFound('webhook', `of conversation ${request.params.id}`);
      return toWebhookView(row, request.params.id);
    },
  );
  app.delete(
    '/v1/conversations/:id/webhook',
    {
      schema: {
        tags,
        summary: 'Remove the conversation’s webhook (the tenant’s applies again)',
        params,
        response: { 204: z.null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      if (!(await deleteWebhookEndpoint(deps.db, await conversationScope(deps, request.tenantId, request.params.id)))) {
        throw notFound('webhook', `of conversation ${request.params.id}`);
      }
      return reply.status(204).send(null);
    },
  );
}

function registerDeliveryLog(app: ZodApp, deps: ApiDeps): void {
  app.get(
    '/v1/webhooks/deliveries',
    {
      schema: {
        tags,
        summary: 'The delivery log, newest first, with every attempt',
        querystring: ListDeliveriesQuerySchema,
        response: { 200: ListDeliveriesResponseSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { conversationId, limit, status, event, before } = request.query;
      const scope = conversationId === undefined ? null : await conversationScope(deps, request.tenantId, conversationId);
      const rows = await listDeliveries(deps.db, request.tenantId, {
        limit,
        ...(scope?.conversationId ? { conversationId: scope.conversationId } : {}),
        ...(status === undefined ? {} : { status }),
        ...(event === undefined ? {} : { event }),
        ...(before === undefined ? {} : { before }),
      });
      const last = rows.at(-1);
      return { deliveries: rows.map(toDeliveryView), nextBefore: rows.length === limit && last ? last.id : null };
    },
  );
}
