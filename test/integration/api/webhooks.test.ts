import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { autoTriggerAfterAppend } from '../../../src/api/auto-trigger.js';
import type { AppendEffects } from '../../../src/api/deps.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';

let t: TestApi;
const committed: Array<{ conversationId: string; effects: AppendEffects }> = [];
beforeAll(async () => {
  t = await createTestApi({
    afterAppend: autoTriggerAfterAppend,
    onAppendCommitted: (conversationId, effects) => {
      committed.push({ conversationId, effects: structuredClone(effects) });
    },
  });
  for (const id of ['conv-a', 'conv-b']) {
    const res = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id, contextLimit: 2000 } });
    expect(res.statusCode, res.body).toBe(201);
  }
});
afterAll(async () => {
  await t?.close();
});

const put = (url: string, payload: unknown, key?: string) =>
  t.app.inject({ method: 'PUT', url, headers: t.auth(key), payload: payload as Record<string, unknown> });
const get = (url: string, key?: string) => t.app.inject({ method: 'GET', url, headers: t.auth(key) });

describe('webhook configuration', () => {
  it('creates the tenant webhook with a generated secret shown once, and keeps it on updates', async () => {
    const created = await put('/v1/webhook', { url: 'https://hooks.example/compactd' });
    expect(created.statusCode, created.body).toBe(200);
    const body = created.json();
    expect(body).toMatchObject({ scope: 'tenant', conversationId: null, url: 'https://hooks.example/compactd', events: [], enabled: true });
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    // the public `whsec_` and 4 of the 43 random characters
    expect(body.secretHint).toBe(`${body.secret.slice(0, 10)}…`);

    const read = (await get('/v1/webhook')).json();
    expect(read.secret).toBeUndefined();
    expect(read.secretHint).toBe(body.secretHint);

    const updated = (
      await put('/v1/webhook', { url: 'https://hooks.example/v2', events: ['compaction.completed', 'compaction.failed'] })
    ).json();
    expect(updated).toMatchObject({
      url: 'https://hooks.example/v2',
      events: ['compaction.completed', 'compaction.failed'],
      secretHint: body.secretHint,
    });
    expect(updated.secret).toBeUndefined();

    const rotated = (await put('/v1/webhook', { url: 'https://hooks.example/v2', secret: 'my-own-secret-0123456789' })).json();
    // a client's own secret: 4 characters of it, never more (10 of a 16-character secret once)
    expect(rotated.secretHint).toBe('my-o…');
    expect(rotated.events).toEqual([]);
    expect(rotated.createdAt).toBe(body.createdAt);
  });

  it.each([
    ['a non-http URL', { url: 'ftp://hooks.example/x' }, 'body.url'],
    ['no URL', { events: [] }, 'body.url'],
    ['an unknown event', { url: 'https://hooks.example', events: ['job.done'] }, 'body.events.0'],
    ['a repeated event', { url: 'https://hooks.example', events: ['context.warning', 'context.warning'] }, 'body.events'],
    ['a short secret', { url: 'https://hooks.example', secret: 'short' }, 'body.secret'],
    ['an unknown field', { url: 'https://hooks.example', retries: 3 }, 'body'],
  ])('rejects %s with a 400 naming the field', async (_, payload, field) => {
    const res = await put('/v1/webhook', payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('sets, reads and removes a conversation webhook; other tenants see none of it', async () => {
    expect((await get('/v1/conversations/conv-a/webhook')).statusCode).toBe(404);
    const set = await put('/v1/conversations/conv-a/webhook', { url: 'https://hooks.example/conv-a', events: ['context.warning'] });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ scope: 'conversation', conversationId: 'conv-a', events: ['context.warning'] });

    expect((await get('/v1/conversations/conv-a/webhook', t.otherKey)).statusCode).toBe(404);
    expect((await put('/v1/conversations/conv-a/webhook', { url: 'https://evil.example' }, t.otherKey)).statusCode).toBe(404);
    expect((await get('/v1/webhook', t.otherKey)).statusCode).toBe(404);
    expect((await put('/v1/conversations/nope/webhook', { url: 'https://hooks.example' })).json().code).toBe('CONVERSATION_NOT_FOUND');

    const removed = await t.app.inject({ method: 'DELETE', url: '/v1/conversations/conv-a/webhook', headers: t.auth() });
    expect(removed.statusCode).toBe(204);
    expect((await get('/v1/conversations/conv-a/webhook')).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'DELETE', url: '/v1/conversations/conv-a/webhook', headers: t.auth() })).statusCode).toBe(404);
  });

  it('documents the routes in the OpenAPI document', async () => {
    const paths = Object.keys((await t.app.inject({ method: 'GET', url: '/docs/json' })).json().paths);
    expect(paths).toEqual(expect.arrayContaining(['/v1/webhook', '/v1/conversations/{id}/webhook', '/v1/webhooks/deliveries', '/metrics']));
  });
});

describe('webhook targets the service may not reach', () => {
  it.each([
    'http://127.0.0.1/',
    'http://[::1]:8080/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://0177.0.0.1/',
    'http://127.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://localhost:6379/',
    'http://localhost./',
    'http://redis.localhost/',
    'http://10.0.0.8/',
    'http://100.64.0.1/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://224.0.0.1/',
    'http://0.0.0.0/',
    'http://255.255.255.255/',
  ])('refuses %s with a 400 naming body.url, for the tenant and for a conversation', async (url) => {
    for (const path of ['/v1/webhook', '/v1/conversations/conv-a/webhook']) {
      const res = await put(path, { url });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json()).toMatchObject({ code: 'WEBHOOK_TARGET_NOT_ALLOWED', errors: [{ field: 'body.url' }] });
    }
  });

  it('refuses a name that resolves to a non-public address without saying which, and accepts one that does not resolve yet', async () => {
    const resolved = new Map([
      ['hooks.inside.test', ['93.184.215.14', '10.1.2.3']],
      ['hooks.public.test', ['93.184.215.14']],
    ]);
    const api = await createTestApi({
      resolveHost: async (name) => {
        const addresses = resolved.get(name);
        if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
        return addresses.map((address) => ({ address, family: 4 }));
      },
    });
    try {
      const inside = await api.app.inject({
        method: 'PUT',
        url: '/v1/webhook',
        headers: api.auth(),
        payload: { url: 'https://hooks.inside.test/x' },
      });
      expect(inside.statusCode).toBe(400);
      expect(inside.json().errors[0].field).toBe('body.url');
      expect(inside.body).not.toContain('10.1.2.3');
      for (const url of ['https://hooks.public.test/x', 'https://not-yet.example/x']) {
        const ok = await api.app.inject({ method: 'PUT', url: '/v1/webhook', headers: api.auth(), payload: { url } });
        expect(ok.statusCode, ok.body).toBe(200);
      }
    } finally {
      await api.close();
    }
  });

  it('accepts what COMPACTD_WEBHOOK_ALLOW names: a host, an address range', async () => {
    const api = await createTestApi({}, { COMPACTD_WEBHOOK_ALLOW: 'localhost,10.0.0.0/8' });
    try {
      for (const [url, status] of [
        ['http://localhost:8080/hooks', 200],
        ['http://10.20.30.40/hooks', 200],
        ['http://127.0.0.1/hooks', 400],
        ['http://redis.localhost/hooks', 400],
      ] as const) {
        const res = await api.app.inject({ method: 'PUT', url: '/v1/webhook', headers: api.auth(), payload: { url } });
        expect(res.statusCode, `${url}: ${res.body}`).toBe(status);
      }
    } finally {
      await api.close();
    }
  });
});

describe('context.warning and the delivery log', () => {
  const append = (id: string, text: string) =>
    t.app.inject({
      method: 'POST',
      url: `/v1/conversations/${id}/messages`,
      headers: t.auth(),
      payload: { messages: [{ role: 'user', content: text }] },
    });

  it('records one delivery when the warning flag turns on, for the endpoint that applies', async () => {
    await put('/v1/webhook', { url: 'https://hooks.example/tenant' });
    await put('/v1/conversations/conv-b/webhook', { url: 'https://hooks.example/conv-b', events: ['context.warning'] });
    committed.length = 0;
    expect((await append('conv-b', 'short')).statusCode).toBe(201);
    expect(committed.at(-1)?.effects.webhookDeliveryIds).toEqual([]);

    // 2000-token window, warnRatio 0.6: this pushes it past 1200 tokens
    expect((await append('conv-b', 'word '.repeat(1600))).statusCode).toBe(201);
    const ids = committed.at(-1)!.effects.webhookDeliveryIds;
    expect(ids).toHaveLength(1);
    // still above: the flag is already on, no second event
    expect((await append('conv-b', 'more')).statusCode).toBe(201);
    expect(committed.at(-1)!.effects.webhookDeliveryIds).toEqual([]);

    const log = (await get('/v1/webhooks/deliveries?conversationId=conv-b')).json();
    expect(log.deliveries).toHaveLength(1);
    const [delivery] = log.deliveries;
    expect(delivery).toMatchObject({
      id: ids[0],
      event: 'context.warning',
      conversationId: 'conv-b',
      url: 'https://hooks.example/conv-b',
      status: 'pending',
      attempts: 0,
    });
    expect(delivery.payload).toMatchObject({
      id: ids[0],
      type: 'context.warning',
      conversationId: 'conv-b',
      data: { contextLimit: 2000, warnRatio: 0.6 },
    });
    expect(delivery.payload.data.ratio).toBeGreaterThanOrEqual(0.6);
  });

  it('sends nothing when the applicable endpoint does not subscribe to the event or is disabled', async () => {
    await put('/v1/conversations/conv-a/webhook', { url: 'https://hooks.example/conv-a', events: ['compaction.completed'] });
    committed.length = 0;
    expect((await append('conv-a', 'word '.repeat(1600))).statusCode).toBe(201);
    expect(committed.at(-1)!.effects.webhookDeliveryIds).toEqual([]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: t.auth(),
      payload: { id: 'conv-c', contextLimit: 2000 },
    });
    expect(res.statusCode).toBe(201);
    await put('/v1/webhook', { url: 'https://hooks.example/tenant', enabled: false });
    expect((await append('conv-c', 'word '.repeat(1600))).statusCode).toBe(201);
    expect(committed.at(-1)!.effects.webhookDeliveryIds).toEqual([]);
  });

  it('filters and paginates the log, scoped to the tenant', async () => {
    await put('/v1/webhook', { url: 'https://hooks.example/tenant' });
    for (const id of ['conv-d', 'conv-e']) {
      await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id, contextLimit: 2000 } });
      await append(id, 'word '.repeat(1600));
    }
    const first = (await get('/v1/webhooks/deliveries?limit=2')).json();
    expect(first.deliveries.map((d: { conversationId: string }) => d.conversationId)).toEqual(['conv-e', 'conv-d']);
    expect(first.nextBefore).toBe(first.deliveries[1].id);
    const second = (await get(`/v1/webhooks/deliveries?limit=2&before=${first.nextBefore}`)).json();
    expect(second.deliveries.map((d: { conversationId: string }) => d.conversationId)).toEqual(['conv-b']);
    expect(second.nextBefore).toBeNull();
    expect((await get('/v1/webhooks/deliveries?status=delivered')).json().deliveries).toEqual([]);
    expect((await get('/v1/webhooks/deliveries?event=context.warning')).json().deliveries).toHaveLength(3);
    expect((await get('/v1/webhooks/deliveries', t.otherKey)).json().deliveries).toEqual([]);
    expect((await get('/v1/webhooks/deliveries?conversationId=conv-b', t.otherKey)).statusCode).toBe(404);
  });
});
