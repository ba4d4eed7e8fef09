import type { FastifyPluginAsync } from 'fastify';

import type { Metrics } from '../../obs/metrics.js';
import { presentedToken, tokenEquals } from '../credentials.js';
import type { ApiDeps } from '../deps.js';
import { sendProblem } from '../problem.js';

/**
 * `GET /metrics` in the Prometheus text format. Open by default, like most exporters (bind
 * the API to a private interface or put it behind a proxy); with `COMPACTD_METRICS_TOKEN`
 * set, a scraper must send `Authorization: Bearer <token>` (Prometheus `authorization`).
 */
export function metricsRoutes(deps: Pick<ApiDeps, 'config'>, metrics: Metrics): FastifyPluginAsync {
  return async (app) => {
    app.get(
      '/metrics',
      { schema: { tags: ['health'], summary: 'Prometheus metrics (text format); bearer COMPACTD_METRICS_TOKEN when set', security: [] } },
      async (request, reply) => {
        const token = deps.config.metrics?.token;
        const given = presentedToken(request.headers.authorization);
        if (token !== undefined && (given === null || !tokenEquals(given, token))) {
          void reply.header('www-authenticate', 'Bearer realm="compactd metrics"');
          return sendProblem(reply, request, {
            status: 401,
            code: 'METRICS_UNAUTHORIZED',
            detail: 'send COMPACTD_METRICS_TOKEN as a bearer token',
          });
        }
        return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
      },
    );
  };
}
