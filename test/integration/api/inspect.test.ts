import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CONTENT_SECURITY_POLICY } from '../../../src/api/inspect/security.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';

const ADMIN = 'admin-token-of-this-test';
let t: TestApi;

beforeAll(async () => {
  t = await createTestApi({}, { COMPACTD_ADMIN_TOKEN: ADMIN });
  // the same id in two tenants: only the operator can be in doubt about which one is meant
  for (const key of [t.key, t.otherKey]) {
    const res = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(key), payload: { id: 'shared-id' } });
    expect(res.statusCode).toBe(201);
  }
});
afterAll(async () => {
  await t?.close();
});

const basic = (password: string) => ({ authorization: `Basic ${Buffer.from(`anyone:${password}`).toString('base64')}` });
const get = (url: string, headers: Record<string, string> = t.auth()) => t.app.inject({ method: 'GET', url, headers });

describe('inspector routes', () => {
  it('challenges a browser without credentials and accepts the key as the Basic password', async () => {
    const bare = await get('/inspect', {});
    expect(bare.statusCode).toBe(401);
    expect(bare.headers['www-authenticate']).toContain('Basic realm="compactd"');
    expect(bare.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    const ok = await get('/inspect', basic(t.key));
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toContain('text/html');
    expect(ok.body).toContain('shared-id');
  });

  it('answers bad parameters with a 400 naming the field', async () => {
    const cursor = await get('/inspect/conversations/shared-id?after=-1');
    expect(cursor.statusCode).toBe(400);
    expect(JSON.stringify(cursor.json())).toContain('after');
    const job = await get('/inspect/jobs/not-a-uuid');
    expect(job.statusCode).toBe(400);
    expect(JSON.stringify(job.json())).toContain('id');
    const id = await get('/inspect/conversations/..');
    expect([400, 404]).toContain(id.statusCode);
    expect((await get('/inspect/conversations/no-such')).statusCode).toBe(404);
  });

  it('serves its one script and stylesheet without credentials, and nothing else from there', async () => {
    const js = await get('/inspect/assets/inspect.js', {});
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toContain('text/javascript');
    expect((await get('/inspect/assets/inspect.css', {})).headers['content-type']).toContain('text/css');
    expect((await get('/inspect/assets/..%2F..%2Fapp.ts', {})).statusCode).toBe(400);
  });

  it('the admin token sees every tenant; an id two tenants share needs ?tenant=', async () => {
    const list = await get('/inspect', basic(ADMIN));
    expect(list.statusCode).toBe(200);
    expect(list.body.match(/shared-id/g)?.length).toBeGreaterThanOrEqual(2);
    const ambiguous = await get('/inspect/conversations/shared-id', basic(ADMIN));
    expect(ambiguous.statusCode).toBe(409);
    expect(ambiguous.json().code).toBe('AMBIGUOUS_CONVERSATION');
    const tenant = /tenant=([0-9a-f-]{36})/.exec(list.body)?.[1];
    expect((await get(`/inspect/conversations/shared-id?tenant=${tenant}`, basic(ADMIN))).statusCode).toBe(200);
  });

  it('actions need a tenant key and a page of this origin', async () => {
    const asAdmin = await t.app.inject({
      method: 'POST',
      url: '/inspect/conversations/shared-id/compact',
      headers: {
        ...basic(ADMIN),
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'http://localhost:80',
        host: 'localhost:80',
      },
      payload: 'strategy=auto',
    });
    expect(asAdmin.statusCode).toBe(403);
    expect(asAdmin.json().code).toBe('ACTION_NEEDS_TENANT_KEY');
    const noOrigin = await t.app.inject({
      method: 'POST',
      url: '/inspect/conversations/shared-id/compact',
      headers: { ...t.auth(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'strategy=auto',
    });
    expect(noOrigin.statusCode).toBe(403);
    expect(noOrigin.json().code).toBe('CROSS_ORIGIN_ACTION');
    const badStrategy = await t.app.inject({
      method: 'POST',
      url: '/inspect/conversations/shared-id/compact',
      headers: { ...t.auth(), 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80', host: 'localhost:80' },
      payload: 'strategy=everything',
    });
    expect(badStrategy.statusCode).toBe(400);
    expect(JSON.stringify(badStrategy.json())).toContain('strategy');
    const sameOrigin = await t.app.inject({
      method: 'POST',
      url: '/inspect/conversations/shared-id/compact',
      headers: { ...t.auth(), 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80', host: 'localhost:80' },
      payload: 'strategy=summarize',
    });
    expect(sameOrigin.statusCode).toBe(303);
    expect(sameOrigin.headers.location).toMatch(/^\/inspect\/jobs\/[0-9a-f-]{36}$/);
  });
});

describe('the agent tree', () => {
  it('links a sub-agent’s page to the session that started it, and lists the session’s sub-agents', async () => {
    const create = (payload: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload });
    expect((await create({ id: 'tree-session' })).statusCode).toBe(201);
    expect((await create({ id: 'tree-session.a-explore', parentId: 'tree-session' })).statusCode).toBe(201);
    expect((await create({ id: 'tree-session.a-review', parentId: 'tree-session' })).statusCode).toBe(201);

    const parent = (await get('/inspect/conversations/tree-session')).body;
    expect(parent).toContain('Agent tree');
    expect(parent).toContain('href="/inspect/conversations/tree-session.a-explore"');
    expect(parent).toContain('href="/inspect/conversations/tree-session.a-review"');
    const child = (await get('/inspect/conversations/tree-session.a-explore')).body;
    expect(child).toMatch(/Started from <a href="\/inspect\/conversations\/tree-session"><code>tree-session<\/code><\/a>/);
    // a conversation with neither parent nor children shows no tree
    expect((await get('/inspect/conversations/shared-id')).body).not.toContain('Agent tree');
  });
});
