import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';

import { DEFAULT_MAX_WAITERS_PER_TENANT } from '../config/env.js';
import { createMetrics } from '../obs/metrics.js';
import { createAuthHook } from './auth.js';
import type { ApiDeps } from './deps.js';
import { gatewayRoutes } from './gateway/routes.js';
import { inspectRoutes } from './inspect/routes.js';
import { createJobWaitersFor } from './job-waiters.js';
import { registerJsonParser } from './json-body.js';
import { handleError, sendProblem } from './problem.js';
import { handleFrameworkError, MAX_PARAM_LENGTH, requireHost, sendClientError } from './protocol-errors.js';
import { adminRoutes } from './routes/admin.js';
import { batchRoutes } from './routes/batches.js';
import { compactionRoutes } from './routes/compactions.js';
import { conversationLifecycleRoutes } from './routes/conversation-lifecycle.js';
import { conversationRoutes } from './routes/conversations.js';
import { exportRoutes } from './routes/export.js';
import { healthRoutes } from './routes/health.js';
import { jobRoutes } from './routes/jobs.js';
import { messageRoutes } from './routes/messages.js';
import { metricsRoutes } from './routes/metrics.js';
import { pinRoutes } from './routes/pins.js';
import { searchRoutes } from './routes/search.js';
import { toolRoutes } from './routes/tools.js';
import { webhookRoutes } from './routes/webhooks.js';
import { createSearchSlots } from './search-slots.js';
import { unreadBodyHooks } from './unread-body.js';

export type { ApiDeps };

/**
 * One log line per request, written when it completes and naming the request, instead of
 * fastify's two: each line is a synchronous write, most of the API's logging cost under load.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/** Builds the HTTP app without listening (tests use `app.inject`). */
export async function buildApp(deps: ApiDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: deps.config.limits.maxBodyBytes,
    requestIdHeader: 'x-request-id',
    logController: new OneLinePerRequest(),
    // Errors before routing are problem+json too (protocol-errors.ts).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: sendClientError,
    http: { requireHostHeader: false },
  }).withTypeProvider<ZodTypeProvider>();
  app.addHook('onRequest', requireHost);
  // before any route plugin, so the gateway's answers inherit them too
  const unreadBody = unreadBodyHooks();
  app.addHook('onSend', unreadBody.onSend);
  app.addHook('onResponse', unreadBody.onResponse);
  app.addHook('preClose', unreadBody.preClose);
  // JSON only: other bodies (text/plain is parsed by default) get a 415, not a confusing 400.
  app.removeContentTypeParser('text/plain');
  registerJsonParser(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, request, {
      status: 404,
      code: 'ROUTE_NOT_FOUND',
      detail: `no route ${request.method} ${request.url.split('?')[0]}`,
    }),
  );
  const metrics = deps.metrics ?? createMetrics();
  // Labelled by route pattern (`/v1/jobs/:id`), never the URL, so the series stay bounded.
  app.addHook('onResponse', async (request, reply) => {
    metrics.httpDuration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  await app.register(swagger, {
    openapi: {
      info: { title: 'compactd', description: 'Durable conversation compaction for LLM agent platforms', version: '1' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  await app.register(healthRoutes(deps));
  await app.register(metricsRoutes(deps, metrics));
  await app.register(adminRoutes(deps));
  // one set of job waiters for the long-polls and the gateway's waits: one subscription, one per-tenant cap
  const jobWaiters =
    deps.jobWaiters ??
    createJobWaitersFor(deps.db, deps.sql, {
      logger: deps.logger,
      maxWaitersPerTenant: deps.config.longPoll?.maxWaitersPerTenant ?? DEFAULT_MAX_WAITERS_PER_TENANT,
    });
  if (!deps.jobWaiters) app.addHook('preClose', () => jobWaiters.close());
  const waiting: ApiDeps = { ...deps, jobWaiters };
  await app.register(gatewayRoutes(waiting));
  // per API process: each process counts its own searches, the API's and the inspector's together
  const searchSlots = createSearchSlots(deps.config.apiLimits?.maxSearchesPerTenant);
  await app.register(inspectRoutes(deps, searchSlots));
  await app.register(async (v1) => {
    v1.addHook('onRequest', createAuthHook(deps.db));
    await v1.register(conversationRoutes(deps));
    await v1.register(conversationLifecycleRoutes(deps));
    await v1.register(messageRoutes(deps));
    await v1.register(pinRoutes(deps));
    await v1.register(compactionRoutes(deps));
    await v1.register(jobRoutes(waiting, metrics));
    await v1.register(batchRoutes(deps));
    await v1.register(exportRoutes(deps));
    await v1.register(searchRoutes(deps, searchSlots));
    await v1.register(toolRoutes(deps));
    await v1.register(webhookRoutes(deps));
  });
  // The zod type provider only refines route typing; callers need the plain instance.
  return app as unknown as FastifyInstance;
}
