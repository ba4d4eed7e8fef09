import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';

import { findJob } from '../../db/repos/inspector.js';
import { AppError, notFound } from '../../lib/errors.js';
import type { ApiDeps } from '../deps.js';
import { ConversationIdSchema, UuidParamsSchema } from '../schemas/common.js';
import { requireConversation } from './lookups.js';
import { sameOrigin } from './security.js';
import { conversationHref, jobHref, type Viewer } from './viewer.js';
import { compactConfirmPage, exportConfirmPage, problemPage, revertConfirmPage } from './views/actions.js';

const STRATEGIES = ['auto', 'summarize', 'mask', 'reset', 'native'] as const;
const TenantQuery = z.object({ tenant: z.uuid('must be a UUID').optional() });
const ConversationParams = z.object({ id: ConversationIdSchema });

const sendPage = (reply: FastifyReply, body: { value: string }, status = 200) =>
  reply.status(status).type('text/html; charset=utf-8').send(body.value);

/** Actions change a tenant's data: only its key may take them, and only from a page of this origin. */
function actor(request: FastifyRequest): Viewer & { tenantKey: string } {
  const viewer = request.inspectViewer;
  if (viewer.tenantKey === null) {
    throw new AppError('ACTION_NEEDS_TENANT_KEY', 'actions belong to a tenant: sign in with its API key, not the admin token', {
      status: 403,
      field: 'authorization',
    });
  }
  if (request.method === 'POST' && !sameOrigin(request)) {
    throw new AppError('CROSS_ORIGIN_ACTION', 'an action must be posted from a page of this origin', { status: 403, field: 'origin' });
  }
  return viewer as Viewer & { tenantKey: string };
}

/**
 * The JSON API does the work, so an action from a page follows every rule a client's call
 * does (quotas, deduplication, the queue hand-off, revert's checks): the request is replayed
 * in-process with the tenant's own key.
 */
async function callApi(app: FastifyInstance, key: string, method: 'POST', url: string, payload?: unknown) {
  const res = await app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${key}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
  const body = res.json<{ id?: string; detail?: string; title?: string }>();
  return { status: res.statusCode, body };
}

export function actionRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  return async (app) => {
    // the confirmation forms post url-encoded fields; only this plugin's routes accept them
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });

    app.get(
      '/inspect/conversations/:id/compact',
      { schema: { hide: true, params: ConversationParams, querystring: TenantQuery } },
      async (request, reply) => {
        const viewer = actor(request);
        const conversation = await requireConversation(deps, viewer, request.params.id, request.query.tenant);
        return sendPage(reply, compactConfirmPage(viewer, conversation));
      },
    );

    app.post(
      '/inspect/conversations/:id/compact',
      {
        schema: {
          hide: true,
          params: ConversationParams,
          querystring: TenantQuery,
          body: z.object({ strategy: z.enum(STRATEGIES).default('auto') }),
        },
      },
      async (request, reply) => {
        const viewer = actor(request);
        const conversation = await requireConversation(deps, viewer, request.params.id, request.query.tenant);
        const res = await callApi(
          app,
          viewer.tenantKey,
          'POST',
          `/v1/conversations/${encodeURIComponent(conversation.externalId)}/compactions`,
          { strategy: request.body.strategy },
        );
        if ((res.status === 200 || res.status === 202) && res.body.id) return reply.redirect(jobHref(res.body.id), 303);
        return sendPage(
          reply,
          problemPage(
            res.status,
            res.body.title ?? 'Not compacted',
            res.body.detail ?? 'the compaction was refused',
            conversationHref(viewer, conversation),
          ),
          res.status,
        );
      },
    );

    app.get(
      '/inspect/conversations/:id/export',
      { schema: { hide: true, params: ConversationParams, querystring: TenantQuery } },
      async (request, reply) => {
        const conversation = await requireConversation(deps, request.inspectViewer, request.params.id, request.query.tenant);
        return sendPage(reply, exportConfirmPage(request.inspectViewer, conversation));
      },
    );

    app.get('/inspect/jobs/:id/revert', { schema: { hide: true, params: UuidParamsSchema } }, async (request, reply) => {
      const viewer = actor(request);
      const job = await findJob(deps.db, viewer.scope, request.params.id);
      if (!job) throw notFound('job', request.params.id);
      return sendPage(
        reply,
        revertConfirmPage(
          { id: job.id, conversation: { externalId: job.conversationExternalId, tenantId: job.conversationTenantId } },
          viewer,
        ),
      );
    });

    app.post('/inspect/jobs/:id/revert', { schema: { hide: true, params: UuidParamsSchema } }, async (request, reply) => {
      const viewer = actor(request);
      const job = await findJob(deps.db, viewer.scope, request.params.id);
      if (!job) throw notFound('job', request.params.id);
      const conversation = { externalId: job.conversationExternalId, tenantId: job.conversationTenantId };
      const res = await callApi(app, viewer.tenantKey, 'POST', `/v1/jobs/${job.id}/revert`);
      if (res.status === 200) return reply.redirect(conversationHref(viewer, conversation, { notice: 'reverted' }), 303);
      return sendPage(
        reply,
        problemPage(res.status, res.body.title ?? 'Not reverted', res.body.detail ?? 'the revert was refused', jobHref(job.id)),
        res.status,
      );
    });
  };
}
