import { randomUUID } from 'node:crypto';

import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TEST_REDIS_URL } from '../../../harness/service-urls.js';
import { JOBS } from '../../../src/queue/catalog.js';
import { queuePrefix, QUEUES } from '../../../src/queue/names.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';

const TOKEN = 'admin-token-0123456789';
const prefix = `t${randomUUID().replaceAll('-', '').slice(0, 12)}`;

let redis: Redis;
let queues: Queue[];
let t: TestApi;
let closed: TestApi;
beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  queues = [QUEUES.compaction, QUEUES.summarize, QUEUES.maintenance, QUEUES.webhooks].map(
    (name) => new Queue(name, { connection: redis, prefix: queuePrefix(prefix) }),
  );
  await queues[0]!.add(JOBS.plan.name, { jobId: randomUUID() }, { delay: 60_000 });
  t = await createTestApi({ dashboardQueues: queues }, { COMPACTD_ADMIN_TOKEN: TOKEN });
  closed = await createTestApi({ dashboardQueues: queues });
});
afterAll(async () => {
  await t?.close();
  await closed?.close();
  for (const queue of queues ?? []) await queue.obliterate({ force: true }).catch(() => undefined);
  await Promise.all((queues ?? []).map((q) => q.close()));
  redis?.disconnect();
});

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('queue dashboard at /admin/queues', () => {
  it.each([
    ['no credentials', {}],
    ['a wrong bearer token', { authorization: 'Bearer not-the-token' }],
    ['a wrong basic password', { authorization: basic('admin', 'not-the-token') }],
    ['a tenant-style key', { authorization: 'Bearer cpd_whatever' }],
  ])('answers 401 with %s, asking for basic auth', async (_, headers: Record<string, string>) => {
    for (const url of ['/admin/queues', '/admin/queues/api/queues']) {
      const res = await t.app.inject({ method: 'GET', url, headers });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm="compactd admin"/);
      expect(res.json()).toMatchObject({ status: 401, code: 'ADMIN_UNAUTHORIZED' });
    }
  });

  it('serves the board with the token as bearer or as the basic password (any user)', async () => {
    for (const authorization of [`Bearer ${TOKEN}`, basic('ops', TOKEN), basic('', TOKEN)]) {
      const page = await t.app.inject({ method: 'GET', url: '/admin/queues', headers: { authorization } });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toContain('text/html');
      expect(page.body).toContain('/admin/queues');
    }
    // the page's own assets come from under the same prefix, behind the same auth
    const html = (await t.app.inject({ method: 'GET', url: '/admin/queues', headers: { authorization: `Bearer ${TOKEN}` } })).body;
    const base = /<base href="([^"]+)"/.exec(html)?.[1];
    const script = /src="(static\/js\/[^"]+)"/.exec(html)?.[1];
    expect(base).toBe('/admin/queues/');
    expect(script).toBeDefined();
    const asset = new URL(script!, `http://localhost${base}`).pathname;
    expect((await t.app.inject({ method: 'GET', url: asset!, headers: { authorization: `Bearer ${TOKEN}` } })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: asset! })).statusCode).toBe(401);
  });

  it('lists the four queues with their jobs through the board API', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { queues: Array<{ name: string; counts: Record<string, number> }> };
    expect(body.queues.map((q) => q.name).sort()).toEqual(['compaction', 'maintenance', 'summarize', 'webhooks']);
    expect(body.queues.find((q) => q.name === 'compaction')?.counts['delayed']).toBe(1);
  });

  it('stays closed (401, saying why) when COMPACTD_ADMIN_TOKEN is not set, whatever is sent', async () => {
    for (const authorization of [undefined, `Bearer ${TOKEN}`, basic('admin', '')]) {
      const res = await closed.app.inject({ method: 'GET', url: '/admin/queues', headers: authorization ? { authorization } : {} });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ code: 'ADMIN_DISABLED' });
      expect(res.json().detail).toContain('COMPACTD_ADMIN_TOKEN');
    }
  });

  it('keeps the board out of the OpenAPI document and leaves the API validation in place', async () => {
    const docs = await t.app.inject({ method: 'GET', url: '/docs/json' });
    expect(docs.statusCode).toBe(200);
    expect(Object.keys(docs.json().paths).some((p) => p.startsWith('/admin'))).toBe(false);
    const invalid = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id: 'bad id!' } });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().code).toBe('VALIDATION_FAILED');
  });
});
