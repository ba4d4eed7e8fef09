import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';

import { getGatewayAccess, setGatewayAccess } from '../../db/repos/tenant-gateway-access.js';
import { getTenantIdByName } from '../../db/repos/tenant-quotas.js';
import { AppError } from '../../lib/errors.js';
import type { ApiDeps } from '../deps.js';
import { GatewayAccessPatchSchema } from '../gateway/model-access.js';

const ParamsSchema = z.object({ name: z.string().min(1, 'must name a tenant').max(200, 'at most 200 characters') });

const notFound = (name: string) => new AppError('TENANT_NOT_FOUND', `no tenant is named ${name}`, { status: 404, field: 'params.name' });

/**
 * The operator's settings of a tenant, behind the admin token (registered inside
 * adminRoutes): `GET|PUT /admin/tenants/:name/gateway-access`, what the tenant may use
 * through the gateway with compactd's provider key (api/gateway/model-access.ts). Not in the
 * OpenAPI document, which is the tenants' API.
 */
export function adminTenantRoutes(deps: Pick<ApiDeps, 'db'>): FastifyPluginAsyncZod {
  return async (app) => {
    const view = (name: string, access: { models: string[] | null; serverTools: string[] | null } | null) => ({
      tenant: name,
      models: access?.models ?? null,
      serverTools: access?.serverTools ?? null,
    });
    app.get('/admin/tenants/:name/gateway-access', { schema: { hide: true, params: ParamsSchema } }, async (request) => {
      const tenantId = await getTenantIdByName(deps.db, request.params.name);
      if (!tenantId) throw notFound(request.params.name);
      return view(request.params.name, await getGatewayAccess(deps.db, tenantId));
    });
    app.put(
      '/admin/tenants/:name/gateway-access',
      { schema: { hide: true, params: ParamsSchema, body: GatewayAccessPatchSchema } },
      async (request) => {
        const access = await setGatewayAccess(deps.db, request.params.name, request.body);
        if (!access) throw notFound(request.params.name);
        return view(request.params.name, access);
      },
    );
  };
}
