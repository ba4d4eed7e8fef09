import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ensureBootstrapKey } from '../../../src/app/bootstrap.js';
import { createApiKey, revokeApiKey } from '../../../src/db/repos/api-keys.js';
import { apiKeys } from '../../../src/db/schema.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';

let t: TestApi;
beforeAll(async () => {
  t = await createTestApi();
  await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id: 'mine' } });
});
afterAll(async () => {
  await t?.close();
});

const bodyFor = (method: string) => (method === 'POST' ? { payload: { messages: [{ role: 'user', content: 'x' }] } } : {});

const routes: Array<[string, string]> = [
  ['GET', '/v1/conversations/mine'],
  ['POST', '/v1/conversations/mine/messages'],
  ['GET', '/v1/conversations/mine/messages'],
  ['GET', '/v1/conversations/mine/context'],
];

describe('authentication and tenant isolation', () => {
  it.each(routes)('%s %s → 401 without a key, with a bad key and with a revoked key', async (method, url) => {
    const { key, prefix } = await createApiKey(t.db.db, { tenantName: 't1' });
    await revokeApiKey(t.db.db, prefix);
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer cpd_not-a-key' },
      { authorization: 'Basic abc' },
      { authorization: `Bearer ${key}` },
    ]) {
      const res = await t.app.inject({ method: method as 'GET', url, headers, ...bodyFor(method) });
      expect(res.statusCode).toBe(401);
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
  });

  it.each(routes)("%s %s → 404 with another tenant's key", async (method, url) => {
    const res = await t.app.inject({ method: method as 'GET', url, headers: t.auth(t.otherKey), ...bodyFor(method) });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('CONVERSATION_NOT_FOUND');
  });

  it('lets two tenants use the same conversation id independently', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(t.otherKey), payload: { id: 'mine' } });
    expect(res.statusCode).toBe(201);
  });

  it('stores only hashes of keys, with a visible prefix', async () => {
    const { key } = await createApiKey(t.db.db, { tenantName: 't1', name: 'ci' });
    const rows = await t.db.db.select().from(apiKeys);
    expect(rows.length).toBeGreaterThan(0);
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(key);
    expect(rows.some((r) => key.startsWith(r.prefix) && r.prefix.length >= 8 && r.hash.length === 64)).toBe(true);
  });

  it('bootstrap key gives tenant "default" access, idempotently', async () => {
    const key = 'bootstrap-key-for-tests-0123456789';
    await ensureBootstrapKey(t.db.db, key);
    await ensureBootstrapKey(t.db.db, key);
    const count = await t.db.db.execute<{ n: number }>(sql`select count(*)::int as n from api_keys where name = 'bootstrap'`);
    expect(count[0]?.n).toBe(1);
    const res = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(key), payload: { id: 'boot' } });
    expect(res.statusCode).toBe(201);
  });

  it('serves health, readiness and OpenAPI docs without a key', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().checks).toEqual({ postgres: 'ok', redis: 'ok' });
    const spec = await t.app.inject({ method: 'GET', url: '/docs/json' });
    expect(spec.statusCode).toBe(200);
    expect(Object.keys(spec.json().paths)).toEqual(
      expect.arrayContaining(['/v1/conversations', '/v1/conversations/{id}/messages', '/v1/conversations/{id}/context']),
    );
  });

  it('answers unknown routes with a problem+json 404', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/nothing-here', headers: t.auth() });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toContain('application/problem+json');
  });
});
