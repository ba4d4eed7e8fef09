import { createHash } from 'node:crypto';

import { sql } from 'drizzle-orm';

import { exampleFor } from '../fuzz/schema-arb.js';
import { type HttpResponse, injectHttp } from '../lib/http.js';
import { ScenarioRecorder, type ScenarioResult } from '../lib/result.js';
import { bodySchema, listRoutes, type RouteInfo, routeKind } from '../lib/routes.js';
import { startChaosStack } from '../lib/stack.js';
import { buildWorld, fillUrl, fingerprint, type World } from '../lib/world.js';

/**
 * Issue 10 §6: every route the app serves (read from the Fastify instance, so new routes are
 * covered without touching this file) × {no key, unknown key, revoked key, another tenant's
 * key, the owner's key}; the dashboard and /metrics without their tokens; API keys stored
 * only as hashes (not in any table, not in the logs).
 */

const ADMIN_TOKEN = 'chaos-admin-token-0123';
const METRICS_TOKEN = 'chaos-metrics-token-0123';
const UNKNOWN_KEY = 'cpd_chaosUnknownKey0000000000000000000000000000';

type Credential = 'none' | 'unknown' | 'revoked' | 'other tenant' | 'owner';

function bodyFor(route: RouteInfo): unknown {
  if (route.method === 'GET' || route.method === 'DELETE') return undefined;
  if (route.path.endsWith('/messages') && route.method === 'POST') return { messages: [{ role: 'user', content: 'auth matrix probe' }] };
  // A PATCH must change something (not expressible in its JSON Schema, where every field is optional).
  if (route.method === 'PATCH') return { metadata: { probe: 'auth matrix' } };
  const schema = bodySchema(route);
  return schema ? exampleFor(schema) : {};
}

const isErasing = (route: RouteInfo) => route.method === 'DELETE' && route.path === '/v1/conversations/:id';

const isProblem = (res: HttpResponse) => (res.headers['content-type'] ?? '').startsWith('application/problem+json');
/** Anthropic `{type: "error", error: {...}}` or OpenAI `{error: {...}}` */
const isProviderError = (res: HttpResponse) => {
  try {
    const body = JSON.parse(res.text) as { error?: unknown };
    return typeof body.error === 'object' && body.error !== null;
  } catch {
    return false;
  }
};

export async function runAuthMatrix(variant: 'quick' | 'full', logDir?: string): Promise<ScenarioResult> {
  const rec = new ScenarioRecorder('auth-matrix', 'Tenant isolation and authentication', variant);
  const stack = await startChaosStack(logDir ? { logDir } : {});
  const logLines: string[] = [];
  try {
    const { app } = await stack.inlineApp(
      { COMPACTD_ADMIN_TOKEN: ADMIN_TOKEN, COMPACTD_METRICS_TOKEN: METRICS_TOKEN },
      { logTo: (line) => logLines.push(line) },
    );
    const keyOf: Record<Credential, string | null> = {
      none: null,
      unknown: UNKNOWN_KEY,
      revoked: stack.keys.revoked,
      'other tenant': stack.keys.other,
      owner: stack.keys.tenant,
    };
    const http = injectHttp(app, stack.keys.tenant);
    const world = await buildWorld(stack, http, injectHttp(app, stack.keys.other));
    const routes = listRoutes(app);
    const send = (route: RouteInfo, credential: Credential) => {
      const body = bodyFor(route);
      return http.request(route.method, fillUrl(route, world), { key: keyOf[credential], ...(body === undefined ? {} : { body }) });
    };
    const failures: string[] = [];
    const fail = (route: RouteInfo, credential: Credential, res: HttpResponse, expected: string) =>
      failures.push(`${route.method} ${route.path} with ${credential}: ${res.status} (expected ${expected})`);

    const api = routes.filter((r) => routeKind(r.path) === 'api');
    const before = await fingerprint(stack.db.db, 'chaos');
    let checked = 0;
    for (const route of api) {
      for (const [credential, expected] of [
        ['none', 401],
        ['unknown', 401],
        ['revoked', 401],
        ['other tenant', 404],
      ] as const) {
        const res = await send(route, credential);
        checked += 1;
        // a tenant-level route (no resource in its path) may serve another tenant, but never the owner's data
        if (credential === 'other tenant' && !route.path.includes(':')) {
          if (res.status >= 500 || world.secrets.some((secret) => res.text.includes(secret)))
            fail(route, credential, res, "< 500 and none of the owner's data");
        } else if (res.status !== expected || !isProblem(res)) fail(route, credential, res, `${expected} problem+json`);
      }
    }
    rec.expect(
      "owner's data changed by requests of other tenants or without a valid key",
      (await fingerprint(stack.db.db, 'chaos')) === before ? 0 : 1,
      '==',
      0,
    );
    // The owner's DELETE of the conversation erases it: it goes last, so the other routes still find it.
    const erasesLast = [...api].sort((a, b) => Number(isErasing(a)) - Number(isErasing(b)));
    for (const route of erasesLast) {
      const res = await send(route, 'owner');
      checked += 1;
      if ([401, 403, 404].includes(res.status) || res.status >= 500) fail(route, 'owner', res, 'served');
    }
    // Gateway routes: a missing, unknown or revoked key is a 401 in the provider's own error shape
    // (the agent's SDK reads it), never an answer from the provider; the owner's key passes auth.
    for (const route of routes.filter((r) => routeKind(r.path) === 'gateway')) {
      for (const credential of ['none', 'unknown', 'revoked', 'owner'] as const) {
        const res = await send(route, credential);
        checked += 1;
        const keyRefused = res.status === 401 && /compactd API key|unknown or revoked API key/.test(res.text);
        if (credential === 'owner') {
          if (keyRefused || res.status >= 500) fail(route, credential, res, 'past the key check');
        } else if (!keyRefused || !isProviderError(res)) fail(route, credential, res, '401 in the provider error shape');
      }
    }
    // Inspector pages: the API's rules (401 without a valid key, 404 for another tenant's resource,
    // served for the owner); an action POST that no page of this origin sent is refused (403
    // CROSS_ORIGIN_ACTION) whoever's key it carries, so the owner's probe changes nothing either.
    const refusedAction = (route: RouteInfo, res: HttpResponse) =>
      route.method === 'POST' && res.status === 403 && res.text.includes('CROSS_ORIGIN_ACTION');
    for (const route of routes.filter((r) => routeKind(r.path) === 'inspector')) {
      for (const [credential, expected] of [
        ['none', 401],
        ['unknown', 401],
        ['revoked', 401],
        ['other tenant', 404],
      ] as const) {
        const res = await send(route, credential);
        checked += 1;
        if (credential === 'other tenant' && refusedAction(route, res)) continue;
        if (credential === 'other tenant' && !route.path.includes(':')) {
          if (res.status >= 500 || world.secrets.some((secret) => res.text.includes(secret)))
            fail(route, credential, res, "< 500 and none of the owner's data");
        } else if (res.status !== expected || !isProblem(res)) fail(route, credential, res, `${expected} problem+json`);
      }
      const res = await send(route, 'owner');
      checked += 1;
      if (!refusedAction(route, res) && ([401, 403, 404].includes(res.status) || res.status >= 500)) fail(route, 'owner', res, 'served');
    }
    await checkGuarded(routes, world, http, (route, credential, res, expected) => {
      checked += 1;
      if (expected !== 'ok') fail(route, credential as Credential, res, expected);
    });

    rec.figure('routes found on the Fastify instance (without HEAD)', routes.length);
    rec.figure(
      'routes by kind',
      (['api', 'gateway', 'inspector', 'dashboard', 'metrics', 'public', 'unknown'] as const)
        .map((k) => `${k} ${routes.filter((r) => routeKind(r.path) === k).length}`)
        .join(', '),
    );
    rec.expect(
      'routes outside the known public/metrics/dashboard/API sets',
      routes.filter((r) => routeKind(r.path) === 'unknown').length,
      '==',
      0,
    );
    rec.figure('requests checked', checked);
    rec.expect('requests answered other than specified', failures.length, '==', 0);
    if (failures.length > 0) rec.note(`Mismatches: ${failures.slice(0, 20).join('; ')}`);
    await checkKeyStorage(rec, stack, logLines.join(''));
    rec.note(
      'API routes: no key, an unknown key and a revoked key → 401 problem+json; another tenant’s key → 404 on every route naming a resource ' +
        '(and, on tenant-level routes, no trace of the owner’s data), with the owner’s rows unchanged afterwards; the owner’s key → served. ' +
        'Gateway routes: no key, an unknown key and a revoked key → 401 in the provider error shape; the owner’s key passes. ' +
        'Inspector pages: as API routes; an action POST without this origin’s Origin → 403 for every key. ' +
        'Dashboard (/admin/queues, every route bull-board registers) and /metrics → 401 without their tokens, also with a tenant API key.',
    );
  } finally {
    await stack.close();
  }
  return rec.finish();
}

type Report = (route: RouteInfo, credential: string, res: HttpResponse, expected: string) => void;

/** Dashboard and /metrics: tokens of their own (an API key opens neither); public routes: open. */
async function checkGuarded(routes: RouteInfo[], world: World, http: ReturnType<typeof injectHttp>, report: Report): Promise<void> {
  for (const route of routes) {
    const kind = routeKind(route.path);
    const url = fillUrl(route, world);
    if (kind === 'dashboard' || kind === 'metrics' || kind === 'unknown') {
      const none = await http.request(route.method, url, { key: null });
      // fastify prints @fastify/static's `/static/*` as a bare `*`: a filled URL that matches no route is not a route
      if (route.path.endsWith('*') && none.status === 404 && none.text.includes('ROUTE_NOT_FOUND')) continue;
      report(route, 'none', none, none.status === 401 && isProblem(none) ? 'ok' : '401 problem+json');
      // the default key of `http` is the tenant's API key: it must not open operator routes
      const tenant = await http.request(route.method, url);
      report(route, 'tenant API key', tenant, tenant.status === 401 && isProblem(tenant) ? 'ok' : '401 problem+json');
      if (route.method === 'GET' && (route.path === '/admin/queues' || kind === 'metrics')) {
        const token = kind === 'metrics' ? METRICS_TOKEN : ADMIN_TOKEN;
        const res = await http.request('GET', url, { key: token });
        report(route, 'its token', res, res.status === 200 ? 'ok' : '200');
      }
    } else if (kind === 'public' && route.method === 'GET' && !route.path.includes('*')) {
      const res = await http.request('GET', url, { key: null });
      report(route, 'none', res, res.status >= 200 && res.status < 400 ? 'ok' : '2xx/3xx (public)');
    }
  }
}

/** Keys exist only as sha256 hashes (plus a short visible prefix): no table and no log line holds one. */
async function checkKeyStorage(rec: ScenarioRecorder, stack: Awaited<ReturnType<typeof startChaosStack>>, log: string): Promise<void> {
  const keys = [stack.keys.tenant, stack.keys.other, stack.keys.revoked];
  const columns = await stack.db.db.execute<{ table_name: string; column_name: string }>(sql`
    select table_name, column_name from information_schema.columns
     where table_schema = 'public' and data_type in ('text', 'character varying', 'jsonb', 'json', 'ARRAY')`);
  let found = 0;
  for (const { table_name: table, column_name: column } of columns) {
    for (const key of keys) {
      const [row] = await stack.db.db.execute<{ n: number }>(
        sql`select count(*)::int as n from ${sql.identifier(table)} where ${sql.identifier(column)}::text like ${`%${key.slice(4)}%`}`,
      );
      found += Number(row?.n ?? 0);
    }
  }
  rec.figure('text/json columns scanned for plaintext keys', columns.length);
  rec.expect('plaintext API keys found in the database', found, '==', 0);
  const stored = await stack.db.db.execute<{ hash: string; prefix: string }>(sql`select hash, prefix from api_keys`);
  const hashes = new Set(stored.map((r) => r.hash));
  rec.expect(
    'keys whose stored hash is not sha256(key)',
    keys.filter((k) => !hashes.has(createHash('sha256').update(k).digest('hex'))).length,
    '==',
    0,
  );
  rec.figure('visible key prefix length (chars)', Math.max(...stored.map((r) => r.prefix.length)));
  rec.expect('API keys found in the API log', keys.filter((k) => log.includes(k.slice(4))).length, '==', 0);
  rec.figure('API log lines scanned', log.split('\n').length - 1);
}
