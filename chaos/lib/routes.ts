import type { FastifyInstance } from 'fastify';

/**
 * Every route the Fastify instance serves, read from `printRoutes` (so routes added later,
 * and plugins' routes that the OpenAPI document hides, such as the dashboard's, are covered
 * automatically), joined with their OpenAPI operation where there is one.
 */

export interface RouteInfo {
  method: string;
  /** fastify syntax: `/v1/jobs/:id` */
  path: string;
  /** OpenAPI operation (parameters, requestBody) when documented */
  operation: OpenApiOperation | null;
}

export interface OpenApiParameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  schema?: JsonSchema;
}

export type JsonSchema = Record<string, unknown>;

export interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

/** Parses fastify's route tree (`commonPrefix: false`): each node's text continues its parent's path. */
export function parseRouteTree(tree: string): Array<{ method: string; path: string }> {
  const routes: Array<{ method: string; path: string }> = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line.replace(/\u00a0/g, ' '));
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    const segment = match[2] ?? '';
    stack.length = depth;
    stack.push(segment);
    const path = stack.join('');
    for (const method of (match[3] ?? '')
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean))
      routes.push({ method, path });
  }
  return routes;
}

/** `/v1/jobs/:id` → `/v1/jobs/{id}` (OpenAPI path syntax). */
const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

export function listRoutes(app: FastifyInstance): RouteInfo[] {
  const spec = (app as unknown as { swagger(): { paths?: Record<string, Record<string, OpenApiOperation>> } }).swagger();
  return parseRouteTree(app.printRoutes({ commonPrefix: false }))
    .filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS')
    .map((r) => ({ ...r, operation: spec.paths?.[toOpenApiPath(r.path)]?.[r.method.toLowerCase()] ?? null }));
}

export type RouteKind = 'public' | 'metrics' | 'dashboard' | 'api' | 'gateway' | 'inspector';

/** Who may call a route: the documented public endpoints, the two token-guarded ones, or API-key routes. */
export function routeKind(path: string): RouteKind | 'unknown' {
  if (path === '/healthz' || path === '/readyz' || path === '/docs' || path.startsWith('/docs/')) return 'public';
  if (path === '/metrics') return 'metrics';
  if (path === '/admin/queues' || path.startsWith('/admin/queues/')) return 'dashboard';
  // the operator's tenant settings: behind the same admin token as the dashboard
  if (path.startsWith('/admin/tenants/')) return 'dashboard';
  if (path.startsWith('/v1/')) return 'api';
  // the providers' APIs for unmodified agents: an API key as the providers' SDKs send it, errors in their shapes
  if (path.startsWith('/gateway/')) return 'gateway';
  // the inspector's one script and stylesheet load before any credentials (the page's CSP allows only them)
  if (path.startsWith('/inspect/assets/')) return 'public';
  // pages for people: the API's keys (Bearer, or the Basic password a browser prompt sends)
  if (path === '/inspect' || path.startsWith('/inspect/')) return 'inspector';
  return 'unknown';
}

/** The body schema of a documented route (JSON), if any. */
export function bodySchema(route: RouteInfo): JsonSchema | null {
  return route.operation?.requestBody?.content?.['application/json']?.schema ?? null;
}
