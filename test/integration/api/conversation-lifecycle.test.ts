import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { insertChunks } from '../../../src/db/repos/chunks.js';
import { recordWebhookEvent } from '../../../src/db/repos/webhooks.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';
import { type ArchiveScenario, seedArchiveScenario } from '../../helpers/archive-seed.js';

/** PATCH and DELETE /v1/conversations/:id against real Postgres. */

let t: TestApi;
beforeAll(async () => {
  t = await createTestApi();
});
afterAll(async () => {
  await t?.close();
});

const inject = (
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT',
  url: string,
  payload?: unknown,
  headers: Record<string, string> = {},
) => t.app.inject({ method, url, headers: { ...t.auth(), ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) });

/** Rows every table holds for one conversation (by its internal id), and the tenant's idempotency records naming it. */
async function rowsOf(conversationId: string, externalId: string): Promise<Record<string, number>> {
  const [row] = await t.db.db.execute<Record<string, string>>(sql`
    select
      (select count(*) from conversations where id = ${conversationId}) as conversations,
      (select count(*) from messages where conversation_id = ${conversationId}) as messages,
      (select count(*) from archived_messages where conversation_id = ${conversationId}) as archived,
      (select count(*) from archived_recall_indexed where conversation_id = ${conversationId} and search_text is not null) as indexed,
      (select count(*) from batches where conversation_id = ${conversationId}) as batches,
      (select count(*) from compaction_jobs where conversation_id = ${conversationId}) as jobs,
      (select count(*) from compaction_chunks r join compaction_jobs j on j.id = r.job_id where j.conversation_id = ${conversationId}) as chunks,
      (select count(*) from webhook_endpoints where conversation_id = ${conversationId}) as webhooks,
      (select count(*) from webhook_deliveries where conversation_id = ${conversationId}) as deliveries,
      (select count(*) from idempotency_keys where route like ${`%/${externalId}/%`} or response ->> 'id' = ${externalId}) as idempotency`);
  return Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Number(v)]));
}

/** A conversation with everything a conversation can own: archive, batches, jobs, chunk rows, webhook, deliveries, idempotency records. */
async function seedEverything(id: string): Promise<ArchiveScenario> {
  const scenario = await seedArchiveScenario(t, id);
  await insertChunks(t.db.db, [
    { jobId: scenario.first.jobId, idx: 99, seqs: [1], sourceTokens: 1, outputBudget: 320, status: 'done', summary: 'memoized' },
  ]);
  expect((await inject('PUT', `/v1/conversations/${id}/webhook`, { url: 'https://hooks.example/own' })).statusCode).toBe(200);
  const conversation = scenario.conversation;
  await recordWebhookEvent(t.db.db, {
    tenantId: conversation.tenantId,
    conversationId: conversation.id,
    conversationExternalId: id,
    type: 'context.warning',
    data: {},
  });
  const appended = await inject(
    'POST',
    `/v1/conversations/${id}/messages`,
    { messages: [{ role: 'user', content: 'one more' }] },
    { 'idempotency-key': `${id}-append` },
  );
  expect(appended.statusCode).toBe(201);
  return scenario;
}

describe('DELETE /v1/conversations/:id', () => {
  it('erases the conversation and everything kept for it in one go, and leaves other conversations alone', async () => {
    const doomed = await seedEverything('doomed');
    const kept = await seedEverything('kept');
    const before = await rowsOf(doomed.conversation.id, 'doomed');
    for (const table of [
      'conversations',
      'messages',
      'archived',
      'indexed',
      'batches',
      'jobs',
      'chunks',
      'webhooks',
      'deliveries',
      'idempotency',
    ]) {
      expect(before[table], table).toBeGreaterThan(0);
    }
    const keptBefore = await rowsOf(kept.conversation.id, 'kept');

    const res = await inject('DELETE', '/v1/conversations/doomed');
    expect(res.statusCode).toBe(204);
    expect(Object.values(await rowsOf(doomed.conversation.id, 'doomed')).every((n) => n === 0)).toBe(true);
    expect(await rowsOf(kept.conversation.id, 'kept')).toEqual(keptBefore);

    expect((await inject('GET', '/v1/conversations/doomed')).statusCode).toBe(404);
    expect((await inject('GET', `/v1/batches/${doomed.ids.A}`)).statusCode).toBe(404);
    expect((await inject('GET', `/v1/jobs/${doomed.first.jobId}`)).statusCode).toBe(404);
    expect((await inject('DELETE', '/v1/conversations/doomed')).json()).toMatchObject({ status: 404, code: 'CONVERSATION_NOT_FOUND' });
  });

  it('answers 409 while a compaction is active, and erases once it is cancelled', async () => {
    expect((await inject('POST', '/v1/conversations', { id: 'busy' })).statusCode).toBe(201);
    const job = await inject('POST', '/v1/conversations/busy/compactions', {});
    expect(job.statusCode).toBe(202);
    const refused = await inject('DELETE', '/v1/conversations/busy');
    expect(refused.statusCode).toBe(409);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(refused.json()).toMatchObject({ code: 'COMPACTION_ACTIVE' });
    expect(refused.json().detail).toContain(`DELETE /v1/jobs/${job.json().id}`);
    expect((await inject('GET', '/v1/conversations/busy')).statusCode).toBe(200);

    expect((await inject('DELETE', `/v1/jobs/${job.json().id}`)).statusCode).toBe(200);
    expect((await inject('DELETE', '/v1/conversations/busy')).statusCode).toBe(204);
  });

  it('forgets the idempotency records of its requests, so a conversation re-created with the same id starts fresh', async () => {
    const first = await inject(
      'POST',
      '/v1/conversations',
      { id: 'reborn', metadata: { life: 1 } },
      { 'idempotency-key': 'reborn-create' },
    );
    expect(first.statusCode).toBe(201);
    expect((await inject('DELETE', '/v1/conversations/reborn')).statusCode).toBe(204);
    const second = await inject(
      'POST',
      '/v1/conversations',
      { id: 'reborn', metadata: { life: 1 } },
      { 'idempotency-key': 'reborn-create' },
    );
    expect(second.statusCode).toBe(201);
    expect(second.json().createdAt).not.toBe(first.json().createdAt);
    expect((await inject('GET', '/v1/conversations/reborn')).statusCode).toBe(200);
  });

  it('sends conversation.deleted to the tenant webhook, in a delivery that outlives the conversation', async () => {
    expect((await inject('PUT', '/v1/webhook', { url: 'https://hooks.example/tenant', events: ['conversation.deleted'] })).statusCode).toBe(
      200,
    );
    expect((await inject('POST', '/v1/conversations', { id: 'announced' })).statusCode).toBe(201);
    expect((await inject('DELETE', '/v1/conversations/announced')).statusCode).toBe(204);
    const log = await inject('GET', '/v1/webhooks/deliveries?event=conversation.deleted');
    expect(log.statusCode).toBe(200);
    const [delivery] = log.json().deliveries;
    expect(delivery).toMatchObject({
      event: 'conversation.deleted',
      conversationId: 'announced',
      url: 'https://hooks.example/tenant',
      status: 'pending',
    });
    expect(delivery.payload).toMatchObject({ type: 'conversation.deleted', conversationId: 'announced', data: { messageCount: 0 } });
    expect((await inject('DELETE', '/v1/webhook')).statusCode).toBe(204);
  });

  it('is scoped to the tenant: another tenant gets 404 and erases nothing', async () => {
    expect((await inject('POST', '/v1/conversations', { id: 'mine' })).statusCode).toBe(201);
    const other = await t.app.inject({ method: 'DELETE', url: '/v1/conversations/mine', headers: t.auth(t.otherKey) });
    expect(other.statusCode).toBe(404);
    expect((await inject('GET', '/v1/conversations/mine')).statusCode).toBe(200);
  });
});

describe('PATCH /v1/conversations/:id', () => {
  it('changes model, context limit, policy and metadata; a new model without a limit takes its window', async () => {
    expect((await inject('POST', '/v1/conversations', { id: 'tuned', metadata: { a: 1 } })).statusCode).toBe(201);
    const model = await inject('PATCH', '/v1/conversations/tuned', { model: 'claude-sonnet-4-5' });
    expect(model.statusCode).toBe(200);
    expect(model.json()).toMatchObject({ model: 'claude-sonnet-4-5' });
    expect(model.json().contextLimit).toBeGreaterThanOrEqual(200_000);

    const all = await inject('PATCH', '/v1/conversations/tuned', {
      contextLimit: 50_000,
      policy: { triggerRatio: 0.9, keepRecent: 4 },
      metadata: { b: 2 },
    });
    expect(all.statusCode).toBe(200);
    expect(all.json()).toMatchObject({ contextLimit: 50_000, policy: { triggerRatio: 0.9, keepRecent: 4 }, metadata: { b: 2 } });
    expect(all.json().updatedAt > model.json().updatedAt).toBe(true);
    expect((await inject('GET', '/v1/conversations/tuned')).json()).toMatchObject({ contextLimit: 50_000, metadata: { b: 2 } });

    const cleared = await inject('PATCH', '/v1/conversations/tuned', { model: null, policy: {} });
    expect(cleared.json()).toMatchObject({ model: null, contextLimit: 128_000, policy: {} });
    const appended = await inject('POST', '/v1/conversations/tuned/messages', { messages: [{ role: 'user', content: 'still works' }] });
    expect(appended.statusCode).toBe(201);
  });

  it.each([
    ['target at or above trigger', { targetRatio: 0.85 }, 'body.policy.targetRatio'],
    ['trigger under the default target', { triggerRatio: 0.4 }, 'body.policy.triggerRatio'],
    ['warn above trigger', { warnRatio: 0.9 }, 'body.policy.warnRatio'],
    ['tier-1 head over its max', { tier1: { headTokens: 5_000 } }, 'body.policy.tier1.headTokens'],
    ['summary budget over the chunk', { chunkTokens: 1_000 }, 'body.policy.chunkTokens'],
  ])('refuses a policy that contradicts itself (%s) with a 400 naming the field, and changes nothing', async (_name, policy, field) => {
    expect((await inject('POST', '/v1/conversations', { id: `contra-${field}`.replaceAll('.', '-') })).statusCode).toBe(201);
    const id = `contra-${field}`.replaceAll('.', '-');
    const res = await inject('PATCH', `/v1/conversations/${id}`, { policy });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'INVALID_POLICY' });
    // Only the field the request set is named (a trigger under the defaults breaks two rules: both name it).
    expect(new Set(res.json().errors.map((e: { field: string }) => e.field))).toEqual(new Set([field]));
    expect((await inject('GET', `/v1/conversations/${id}`)).json().policy).toEqual({});
    const atCreate = await inject('POST', '/v1/conversations', { policy });
    expect(atCreate.statusCode).toBe(400);
    expect(new Set(atCreate.json().errors.map((e: { field: string }) => e.field))).toEqual(new Set([field]));
  });

  it('refuses an empty body, unknown fields, bad values, and other tenants’ conversations', async () => {
    expect((await inject('POST', '/v1/conversations', { id: 'strict' })).statusCode).toBe(201);
    expect((await inject('PATCH', '/v1/conversations/strict', {})).statusCode).toBe(400);
    expect((await inject('PATCH', '/v1/conversations/strict', { id: 'renamed' })).statusCode).toBe(400);
    const limit = await inject('PATCH', '/v1/conversations/strict', { contextLimit: 10 });
    expect(limit.json().errors[0].field).toBe('body.contextLimit');
    expect((await inject('PATCH', '/v1/conversations/missing', { metadata: {} })).statusCode).toBe(404);
    const other = await t.app.inject({
      method: 'PATCH',
      url: '/v1/conversations/strict',
      headers: t.auth(t.otherKey),
      payload: { metadata: { x: 1 } },
    });
    expect(other.statusCode).toBe(404);
  });
});
