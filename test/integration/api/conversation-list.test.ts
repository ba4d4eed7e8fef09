import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { waitFor } from '../../../harness/wait-for.js';
import { findTenantByApiKey } from '../../../src/db/repos/api-keys.js';
import { insertConversation } from '../../../src/db/repos/conversations.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';

/** GET /v1/conversations: the tenant's conversations, paged by cursor, filtered; parent links from POST. */

let t: TestApi;

beforeAll(async () => {
  t = await createTestApi();
});

afterAll(async () => {
  await t?.close();
});

async function create(body: Record<string, unknown>, key = t.key) {
  const res = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(key), payload: body });
  expect(res.statusCode, res.body).toBe(201);
}

async function list(query = '', key = t.key) {
  const res = await t.app.inject({ method: 'GET', url: `/v1/conversations${query}`, headers: t.auth(key) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { conversations: Array<Record<string, unknown> & { id: string }>; nextCursor: string | null };
}

/** Every page of `query` (with `limit`), in order. */
async function listAll(query: string, limit: number) {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const page = await list(`?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(page.conversations.length).toBeLessThanOrEqual(limit);
    ids.push(...page.conversations.map((c) => c.id));
    cursor = page.nextCursor;
    if (!cursor) return ids;
  }
  throw new Error('more than 100 pages');
}

describe('GET /v1/conversations', () => {
  beforeAll(async () => {
    await create({ id: 'root', model: 'claude-sonnet-4-5' });
    // what the gateway writes on the conversations it creates (gateway/store.ts)
    await create({ id: 'gw-main', metadata: { createdBy: 'gateway' } });
    await create({ id: 'gw-sub-1', metadata: { createdBy: 'gateway' }, parentId: 'gw-main' });
    await create({ id: 'gw-sub-2', metadata: { createdBy: 'gateway' }, parentId: 'gw-main' });
    await create({ id: 'odd-creator', metadata: { createdBy: 7 } });
    await create({ id: 'elsewhere' }, t.otherKey);
  });

  it('lists the tenant’s conversations oldest first with their counts, creator and parent', async () => {
    const append = await t.app.inject({
      method: 'POST',
      url: '/v1/conversations/root/messages',
      headers: t.auth(),
      payload: {
        messages: [
          { role: 'user', content: 'hello' },
          { role: 'assistant', content: 'hi' },
        ],
      },
    });
    expect(append.statusCode, append.body).toBe(201);
    const page = await list();
    expect(page.conversations.map((c) => c.id)).toEqual(['root', 'gw-main', 'gw-sub-1', 'gw-sub-2', 'odd-creator']);
    expect(page.nextCursor).toBeNull();
    const [root, , sub] = page.conversations;
    expect(root).toMatchObject({
      id: 'root',
      model: 'claude-sonnet-4-5',
      contextLimit: 200_000,
      activeMessages: 2,
      createdBy: null,
      parentId: null,
    });
    expect(root!['activeTokens']).toBeGreaterThan(0);
    expect(Date.parse(String(root!['updatedAt']))).toBeGreaterThanOrEqual(Date.parse(String(root!['createdAt'])));
    expect(sub).toMatchObject({ id: 'gw-sub-1', createdBy: 'gateway', parentId: 'gw-main', activeMessages: 0 });
    // a creator that is not a string is no creator
    expect(page.conversations.at(-1)).toMatchObject({ id: 'odd-creator', createdBy: null });
    expect((await list('', t.otherKey)).conversations.map((c) => c.id)).toEqual(['elsewhere']);
  });

  it('filters by creator, parent and last update', async () => {
    expect((await list('?createdBy=gateway')).conversations.map((c) => c.id)).toEqual(['gw-main', 'gw-sub-1', 'gw-sub-2']);
    expect((await list('?createdBy=7')).conversations).toEqual([]);
    expect((await list('?parentId=gw-main')).conversations.map((c) => c.id)).toEqual(['gw-sub-1', 'gw-sub-2']);
    expect((await list('?parentId=gw-main&createdBy=gateway&limit=1')).conversations.map((c) => c.id)).toEqual(['gw-sub-1']);
    // no such parent, and another tenant's conversation, have no children here
    expect((await list('?parentId=no-such-parent')).conversations).toEqual([]);
    expect((await list('?parentId=elsewhere')).conversations).toEqual([]);

    const since = (await list()).conversations.reduce(
      (latest, c) => (String(c['updatedAt']) > latest ? String(c['updatedAt']) : latest),
      '',
    );
    // the marker must fall after every earlier update: wait until the clock has passed the latest
    await waitFor(() => Date.now() > Date.parse(since) + 1, 1_000, 1, 'the clock past the latest update');
    const marker = new Date().toISOString();
    const append = await t.app.inject({
      method: 'POST',
      url: '/v1/conversations/gw-sub-2/messages',
      headers: t.auth(),
      payload: { messages: [{ role: 'user', content: 'more' }] },
    });
    expect(append.statusCode, append.body).toBe(201);
    expect((await list(`?updatedSince=${marker}`)).conversations.map((c) => c.id)).toEqual(['gw-sub-2']);
    // inclusive: the latest update before the append is at or after `since`
    expect((await list(`?updatedSince=${since}`)).conversations.length).toBeGreaterThanOrEqual(1);
  });

  it('pages by cursor without skipping or repeating, through rows created in the same instant', async () => {
    const { tenantId } = (await findTenantByApiKey(t.db.db, t.key))!;
    // one transaction: one now(), so these share their creation time to the microsecond
    await t.db.db.transaction(async (tx) => {
      for (const id of ['same-c', 'same-a', 'same-b']) {
        await insertConversation(tx, { tenantId, externalId: id, model: null, contextLimit: 8192, policy: {}, metadata: {} });
      }
    });
    const all = (await list('?limit=200')).conversations.map((c) => c.id);
    expect(all.slice(-3)).toEqual(['same-a', 'same-b', 'same-c']);
    for (const limit of [1, 2, 3]) expect(await listAll('', limit)).toEqual(all);
    expect(await listAll('&createdBy=gateway', 1)).toEqual(['gw-main', 'gw-sub-1', 'gw-sub-2']);
  });

  it('goes on after the previous page’s last conversation was deleted', async () => {
    await create({ id: 'gone-1' });
    await create({ id: 'gone-2' });
    await create({ id: 'kept-3' });
    const all = (await list('?limit=200')).conversations.map((c) => c.id);
    const at = all.indexOf('gone-1');
    const page = await list(`?limit=${at + 1}`);
    expect(page.conversations.at(-1)?.id).toBe('gone-1');
    const deleted = await t.app.inject({ method: 'DELETE', url: '/v1/conversations/gone-1', headers: t.auth() });
    expect(deleted.statusCode, deleted.body).toBe(204);
    const next = await list(`?limit=2&cursor=${encodeURIComponent(page.nextCursor!)}`);
    expect(next.conversations.map((c) => c.id)).toEqual(['gone-2', 'kept-3']);
  });

  it('unlinks the children of an erased parent', async () => {
    await create({ id: 'parent-to-erase' });
    await create({ id: 'orphan', parentId: 'parent-to-erase' });
    expect((await list('?parentId=parent-to-erase')).conversations.map((c) => c.id)).toEqual(['orphan']);
    const deleted = await t.app.inject({ method: 'DELETE', url: '/v1/conversations/parent-to-erase', headers: t.auth() });
    expect(deleted.statusCode, deleted.body).toBe(204);
    const orphan = (await list('?limit=200')).conversations.find((c) => c.id === 'orphan');
    expect(orphan).toMatchObject({ parentId: null });
  });

  it.each([
    ['?limit=0', 'querystring.limit'],
    ['?limit=201', 'querystring.limit'],
    ['?limit=ten', 'querystring.limit'],
    ['?cursor=not-a-cursor', 'querystring.cursor'],
    [`?cursor=${Buffer.from(JSON.stringify(['yesterday', 'root'])).toString('base64url')}`, 'querystring.cursor'],
    [`?cursor=${Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000000Z', 'a\u0000b'])).toString('base64url')}`, 'querystring.cursor'],
    ['?updatedSince=yesterday', 'querystring.updatedSince'],
    ['?updatedSince=0000-01-01T00:00:00Z', 'querystring.updatedSince'],
    ['?parentId=..', 'querystring.parentId'],
    ['?createdBy=', 'querystring.createdBy'],
  ])('answers %s with a 400 naming %s', async (query, field) => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/conversations${query}`, headers: t.auth() });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json().errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('needs a key', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/v1/conversations' })).statusCode).toBe(401);
  });
});

describe('POST /v1/conversations with parentId', () => {
  beforeAll(async () => {
    await create({ id: 'elsewhere-parent' }, t.otherKey);
  });

  it.each([
    ['a conversation that does not exist', 'never-created'],
    ['another tenant’s conversation', 'elsewhere-parent'],
  ])('answers 400 naming body.parentId for %s', async (_what, parentId) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: t.auth(),
      payload: { id: `child-of-${parentId}`, parentId },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ code: 'PARENT_NOT_FOUND', errors: [{ field: 'body.parentId' }] });
  });

  it('answers 400 naming body.parentId for an id that is not one', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { parentId: 'a b' } });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().errors[0].field).toBe('body.parentId');
  });
});
