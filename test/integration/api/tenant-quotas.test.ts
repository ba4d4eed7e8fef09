import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { autoTriggerAfterAppend } from '../../../src/api/auto-trigger.js';
import { createApiKey } from '../../../src/db/repos/api-keys.js';
import { setTenantQuotas } from '../../../src/db/repos/tenant-quotas.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';

/**
 * Per-tenant quotas on compactions: active at once, and started per minute. Over either, a
 * POST is a 429 problem+json with `retry-after`; an append's auto compaction is not started
 * but the append succeeds and says why. A tenant's own columns override the defaults.
 */
let t: TestApi;
beforeAll(async () => {
  t = await createTestApi(
    { afterAppend: autoTriggerAfterAppend },
    { COMPACTD_TENANT_MAX_ACTIVE: '2', COMPACTD_TENANT_COMPACTIONS_PER_MINUTE: '1000' },
  );
});
afterAll(async () => {
  await t?.close();
});

async function createConversation(key: string, id: string, policy: Record<string, unknown> = {}) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/conversations',
    headers: t.auth(key),
    payload: { id, contextLimit: 2000, policy },
  });
  expect(res.statusCode, res.body).toBe(201);
}

const compact = (key: string, id: string, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: `/v1/conversations/${id}/compactions`,
    headers: { ...t.auth(key), ...headers },
    payload: { strategy: 'mask' },
  });

function expectQuotaProblem(res: Awaited<ReturnType<typeof compact>>, code: string) {
  expect(res.statusCode, res.body).toBe(429);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.json()).toMatchObject({ status: 429, code });
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  return retryAfter;
}

describe('the active-compactions quota', () => {
  it('answers 429 + retry-after past the limit, still deduplicates an active job, and leaves other tenants alone', async () => {
    for (const id of ['a1', 'a2', 'a3']) await createConversation(t.key, id);
    expect((await compact(t.key, 'a1')).statusCode).toBe(202);
    expect((await compact(t.key, 'a2')).statusCode).toBe(202);
    expect(expectQuotaProblem(await compact(t.key, 'a3'), 'TENANT_ACTIVE_COMPACTIONS_LIMIT')).toBe(5);
    // asking again for a conversation whose compaction is already active creates nothing: no 429
    expect((await compact(t.key, 'a1')).statusCode).toBe(200);

    await createConversation(t.otherKey, 'b1');
    expect((await compact(t.otherKey, 'b1')).statusCode).toBe(202);
  });

  it('is not stored under an Idempotency-Key: the same request is accepted once a slot frees', async () => {
    const headers = { 'idempotency-key': 'quota-retry' };
    expectQuotaProblem(await compact(t.key, 'a3', headers), 'TENANT_ACTIVE_COMPACTIONS_LIMIT');
    const jobs = (await t.app.inject({ method: 'GET', url: '/v1/conversations/a1/jobs', headers: t.auth() })).json();
    const active = jobs.jobs as Array<{ id: string }>;
    expect(active.length).toBeGreaterThan(0);
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/jobs/${active[0]!.id}`, headers: t.auth() })).statusCode).toBeLessThan(300);
    expect((await compact(t.key, 'a3', headers)).statusCode).toBe(202);
  });

  it("skips an append's auto compaction over the quota: the append is a 201 that says so, and no job is created", async () => {
    await createConversation(t.key, 'auto', { minMessages: 0, cooldownMessages: 0 });
    const messages = Array.from({ length: 10 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `message ${i}: ${'the deploy failed again on the staging host '.repeat(20)}`,
    }));
    const res = await t.app.inject({ method: 'POST', url: '/v1/conversations/auto/messages', headers: t.auth(), payload: { messages } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().compaction).toBeNull();
    expect(res.json().compactionDeferred).toEqual({ code: 'TENANT_ACTIVE_COMPACTIONS_LIMIT', detail: expect.any(String), retryAfter: 5 });
    expect(res.json().messages).toHaveLength(10);
    const conversation = (await t.app.inject({ method: 'GET', url: '/v1/conversations/auto', headers: t.auth() })).json();
    expect(conversation.lastJob).toBeNull();
  });
});

describe('the compactions-per-minute quota', () => {
  it("answers 429 + retry-after past a tenant's own limit, whether or not its jobs are still active", async () => {
    const { key } = await createApiKey(t.db.db, { tenantName: 'rate-limited' });
    expect(await setTenantQuotas(t.db.db, 'rate-limited', { compactionsPerMinute: 2, maxActiveCompactions: 100 })).toBe(true);
    for (const id of ['r1', 'r2', 'r3']) await createConversation(key, id);
    expect((await compact(key, 'r1')).statusCode).toBe(202);
    expect((await compact(key, 'r2')).statusCode).toBe(202);
    const retryAfter = expectQuotaProblem(await compact(key, 'r3'), 'TENANT_COMPACTION_RATE_LIMIT');
    expect(retryAfter).toBeGreaterThan(50);

    // its override of the active quota (100) replaced the default (2): only the rate stopped it
    expect(await setTenantQuotas(t.db.db, 'rate-limited', { compactionsPerMinute: null })).toBe(true);
    expect((await compact(key, 'r3')).statusCode).toBe(202);
  });
});
