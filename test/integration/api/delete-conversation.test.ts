import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApi, type TestApi } from '../../helpers/api.js';

/** DELETE /v1/conversations/:id: what a failed import uses to leave nothing half-made. */
let t: TestApi;
beforeAll(async () => {
  t = await createTestApi();
});
afterAll(async () => {
  await t?.close();
});

const create = (id: string) => t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id } });
const append = (id: string, key: string, text: string) =>
  t.app.inject({
    method: 'POST',
    url: `/v1/conversations/${id}/messages`,
    headers: { ...t.auth(), 'idempotency-key': key },
    payload: { messages: [{ role: 'user', content: text }] },
  });
const remove = (id: string, key?: string) => t.app.inject({ method: 'DELETE', url: `/v1/conversations/${id}`, headers: t.auth(key) });
const get = (id: string) => t.app.inject({ method: 'GET', url: `/v1/conversations/${id}`, headers: t.auth() });

describe('DELETE /v1/conversations/:id', () => {
  it('deletes the conversation and what it holds; the same id starts clean, its old Idempotency-Keys forgotten', async () => {
    expect((await create('to-delete')).statusCode).toBe(201);
    expect((await append('to-delete', 'import-k-0', 'first life')).statusCode).toBe(201);
    expect((await remove('to-delete')).statusCode).toBe(204);
    expect((await get('to-delete')).json().code).toBe('CONVERSATION_NOT_FOUND');
    expect((await remove('to-delete')).statusCode).toBe(404);

    expect((await create('to-delete')).statusCode).toBe(201);
    const again = await append('to-delete', 'import-k-0', 'first life');
    expect(again.statusCode, again.body).toBe(201);
    expect((await get('to-delete')).json().messageCount).toBe(1);
    const page = (await t.app.inject({ method: 'GET', url: '/v1/conversations/to-delete/messages', headers: t.auth() })).json();
    expect(page.messages.map((m: { seq: number }) => m.seq)).toEqual([1]);
  });

  it('is a 404 for another tenant, which cannot delete it', async () => {
    expect((await create('not-yours')).statusCode).toBe(201);
    expect((await remove('not-yours', t.otherKey)).statusCode).toBe(404);
    expect((await get('not-yours')).statusCode).toBe(200);
  });

  it('refuses while a compaction is active, naming the job', async () => {
    expect((await create('busy')).statusCode).toBe(201);
    expect((await append('busy', 'busy-0', 'something to compact')).statusCode).toBe(201);
    const job = (await t.app.inject({ method: 'POST', url: '/v1/conversations/busy/compactions', headers: t.auth(), payload: {} })).json();
    const res = await remove('busy');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'COMPACTION_ACTIVE' });
    expect(res.json().detail).toContain(job.id);
    expect((await get('busy')).statusCode).toBe(200);
  });
});
