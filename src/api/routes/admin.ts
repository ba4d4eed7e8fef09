import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';

import { presentedToken, tokenEquals } from '../credentials.js';
import type { ApiDeps } from '../deps.js';
import { sendProblem } from '../problem.js';
import { foreignErrorsAsProblems } from '../protocol-errors.js';
import { adminTenantRoutes } from './admin-tenants.js';

/** Where the queue dashboard (bull-board) is served. */
export const DASHBOARD_PATH = '/admin/queues';

/**
 * Dashboard auth: `COMPACTD_ADMIN_TOKEN` as a bearer token, or as the password of Basic auth
 * (any user name) so a browser's login prompt works. Without the variable every request is a
 * 401 that says so: a dashboard that can retry, clean and obliterate queues is never open.
 */
function adminAuth(token: string | undefined) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const given = presentedToken(request.headers.authorization);
    if (token !== undefined && given !== null && tokenEquals(given, token)) return;
    void reply.header('www-authenticate', 'Basic realm="compactd admin", charset="UTF-8"');
    // Replied here, not thrown: bull-board sets its own error handler inside its plugin.
    return sendProblem(reply, request, {
      status: 401,
      code: token === undefined ? 'ADMIN_DISABLED' : 'ADMIN_UNAUTHORIZED',
      detail:
        token === undefined
          ? 'the dashboard is disabled: set COMPACTD_ADMIN_TOKEN to enable it'
          : 'give COMPACTD_ADMIN_TOKEN as a bearer token or as the Basic auth password',
    });
  };
}

/**
 * The operator's routes behind COMPACTD_ADMIN_TOKEN: tenants' settings (admin-tenants.ts)
 * and bull-board at /admin/queues over the given queues. bull-board runs in a plugin of its
 * own: its routes carry no request schemas (so the zod compilers of the API never see them)
 * and are hidden from the OpenAPI document; its error handler stays inside that plugin.
 */
export function adminRoutes(deps: Pick<ApiDeps, 'config' | 'dashboardQueues' | 'db'>): FastifyPluginAsync {
  return async (app) => {
    app.addHook('onRequest', adminAuth(deps.config.adminToken));
    // bull-board answers errors as {error: {key}}; clients of this API get problem+json everywhere.
    app.addHook('onSend', foreignErrorsAsProblems);
    // tenants' settings, behind the same token
    await app.register(adminTenantRoutes(deps));
    const queues = deps.dashboardQueues ?? [];
    if (queues.length === 0) {
      // Nothing to show (an API built without queues): still authenticate, then 404.
      app.all(`${DASHBOARD_PATH}`, { schema: { hide: true } }, async (request, reply) =>
        sendProblem(reply, request, { status: 404, code: 'DASHBOARD_UNAVAILABLE', detail: 'no queues are attached to this API' }),
      );
      return;
    }
    const serverAdapter = new FastifyAdapter();
    serverAdapter.setBasePath(DASHBOARD_PATH);
    createBullBoard({
      queues: queues.map((queue) => new BullMQAdapter(queue)),
      serverAdapter,
      options: { uiConfig: { boardTitle: 'compactd' } },
    });
    await app.register(serverAdapter.registerPlugin(), { prefix: DASHBOARD_PATH });
  };
}
