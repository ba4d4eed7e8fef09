import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { loadRealTranscript } from '../../../harness/transcripts.js';
import { waitFor } from '../../../harness/wait-for.js';
import { recordWebhookEvent } from '../../../src/db/repos/webhooks.js';
import { sweepWebhookDeliveries } from '../../../src/worker/processors/webhook.js';
import { verifyWebhookSignature } from '../../../src/worker/webhooks.js';
import { conversationByExternalId } from '../../helpers/archive-seed.js';
import { compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * A real receiver on 127.0.0.1: it checks every signature and answers per path, failing
 * the first `failFirst` requests of a path (or all of them with `failFirst: Infinity`).
 */
interface Received {
  path: string;
  at: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  signatureValid: boolean;
  answered: number;
}

const SECRET = 'whsec_e2e_secret_0123456789abcdef';
const BACKOFF_MS = 200;
const ATTEMPTS = 5;

let server: Server;
let base: string;
const received: Received[] = [];
const failFirst = new Map<string, number>();

let stack: Stack;
let sim: TestLlmSim;
beforeAll(async () => {
  sim = await startTestLlmSim();
  server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      const signatureValid = verifyWebhookSignature({
        secret: SECRET,
        body,
        timestamp: request.headers['compactd-timestamp'] as string | undefined,
        signature: request.headers['compactd-signature'] as string | undefined,
      });
      const seen = received.filter((r) => r.path === path).length;
      const answered = !signatureValid ? 401 : seen < (failFirst.get(path) ?? 0) ? (path === '/down' ? 503 : 500) : 200;
      received.push({ path, at: Date.now(), headers: request.headers, body, signatureValid, answered });
      response.writeHead(answered).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The receiver is on loopback, which webhooks may reach only when the operator allows it.
  stack = await createStack({
    env: {
      COMPACTD_WEBHOOK_ATTEMPTS: String(ATTEMPTS),
      COMPACTD_WEBHOOK_BACKOFF_MS: String(BACKOFF_MS),
      COMPACTD_WEBHOOK_ALLOW: '127.0.0.1',
      ANTHROPIC_BASE_URL: sim.url,
    },
  });
  const res = await stack.app.inject({
    method: 'PUT',
    url: '/v1/webhook',
    headers: stack.auth(),
    payload: { url: `${base}/tenant`, secret: SECRET },
  });
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
  await new Promise((resolve) => server?.close(resolve));
});

const tau = () => loadRealTranscript('tau-bench/gpt-4o-airline.json').conversations.filter((c) => c.messages.length >= 30);
const eventsFor = (path: string, jobId: string) => received.filter((r) => r.path === path && JSON.parse(r.body).data?.job?.id === jobId);

async function deliveries(query: string) {
  const res = await stack.app.inject({ method: 'GET', url: `/v1/webhooks/deliveries?${query}`, headers: stack.auth() });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().deliveries as Array<Record<string, unknown> & { attemptLog: Array<{ statusCode: number | null }> }>;
}

describe('webhooks end to end', () => {
  it('delivers compaction.completed, signed, retried with backoff until the receiver accepts it', async () => {
    failFirst.set('/tenant', 2);
    await seedConversation(stack, 'hooked', tau()[0]!.messages, { policy: { auto: false } });
    const done = await waitForJob(stack, (await compact(stack, 'hooked', { strategy: 'summarize', keepRecent: 4 })).id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');

    await waitFor(() => eventsFor('/tenant', done.id).some((r) => r.answered === 200), 30_000);
    const attempts = eventsFor('/tenant', done.id);
    expect(attempts.map((a) => a.answered)).toEqual([500, 500, 200]);
    expect(attempts.every((a) => a.signatureValid)).toBe(true);
    // the same event (and bytes) every time, each attempt signed with its own timestamp
    expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
    expect(new Set(attempts.map((a) => a.headers['compactd-delivery'])).size).toBe(1);
    const [first, second, third] = attempts as [Received, Received, Received];
    expect(second.at - first.at).toBeGreaterThanOrEqual(BACKOFF_MS * 0.9);
    expect(third.at - second.at).toBeGreaterThanOrEqual(BACKOFF_MS * 2 * 0.9);
    // independently of the project's helper: HMAC-SHA256 over "<timestamp>.<body>"
    const expected = createHmac('sha256', SECRET).update(`${third.headers['compactd-timestamp']}.${third.body}`).digest('hex');
    expect(third.headers['compactd-signature']).toBe(`v1=${expected}`);

    const event = JSON.parse(third.body);
    expect(third.headers['compactd-event']).toBe('compaction.completed');
    expect(event).toMatchObject({ id: third.headers['compactd-delivery'], type: 'compaction.completed', conversationId: 'hooked' });
    expect(event.data.job).toMatchObject({ id: done.id, conversationId: 'hooked', status: 'completed', trigger: 'api' });
    expect(event.data.job.result.tokensAfter).toBe(done.result.tokensAfter);

    await waitFor(async () => (await deliveries('conversationId=hooked'))[0]?.['status'] === 'delivered', 10_000);
    const [logged] = await deliveries('conversationId=hooked');
    expect(logged).toMatchObject({
      id: event.id,
      event: 'compaction.completed',
      status: 'delivered',
      attempts: 3,
      lastStatusCode: 200,
      lastError: null,
    });
    expect(logged!.attemptLog.map((a) => a.statusCode)).toEqual([500, 500, 200]);
  });

  it('sends a conversation’s events to its own webhook instead of the tenant’s (compaction.noop here)', async () => {
    await seedConversation(stack, 'own-hook', tau()[1]!.messages.slice(0, 4), { policy: { auto: false } });
    const set = await stack.app.inject({
      method: 'PUT',
      url: '/v1/conversations/own-hook/webhook',
      headers: stack.auth(),
      payload: { url: `${base}/own`, secret: SECRET },
    });
    expect(set.statusCode, set.body).toBe(200);
    const done = await waitForJob(stack, (await compact(stack, 'own-hook')).id);
    expect(done.status).toBe('noop');
    await waitFor(() => eventsFor('/own', done.id).length > 0, 30_000);
    const [own] = eventsFor('/own', done.id);
    expect(own!.headers['compactd-event']).toBe('compaction.noop');
    expect(JSON.parse(own!.body).data.job.result.reason).toBe(done.result.reason);
    expect(eventsFor('/tenant', done.id)).toEqual([]);
  });

  it('reports compaction.failed', async () => {
    await seedConversation(stack, 'fails', tau()[2]!.messages, { policy: { auto: false } });
    // the provider refuses every call (401), and no fallback is allowed
    sim.control.setFaults({ rates: { auth: 1 } });
    const done = await waitForJob(
      stack,
      (await compact(stack, 'fails', { strategy: 'summarize', model: 'anthropic:claude-haiku-4-5', onLLMFailure: 'fail' })).id,
    ).finally(() => sim.control.setFaults({}));
    expect(done.status).toBe('failed');
    await waitFor(() => eventsFor('/tenant', done.id).some((r) => r.answered === 200), 30_000);
    const event = JSON.parse(eventsFor('/tenant', done.id).at(-1)!.body);
    expect(event).toMatchObject({ type: 'compaction.failed', data: { job: { status: 'failed', error: { code: done.error.code } } } });
  });

  it('delivers context.warning when an append crosses warnRatio', async () => {
    const created = await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: { id: 'warned', contextLimit: 2000 },
    });
    expect(created.statusCode).toBe(201);
    const appended = await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations/warned/messages',
      headers: stack.auth(),
      payload: { messages: [{ role: 'user', content: 'word '.repeat(1600) }] },
    });
    expect(appended.statusCode).toBe(201);
    const isWarning = (r: Received) => r.headers['compactd-event'] === 'context.warning' && JSON.parse(r.body).conversationId === 'warned';
    await waitFor(() => received.some((r) => isWarning(r) && r.answered === 200), 30_000);
    const event = JSON.parse(received.find(isWarning)!.body);
    expect(event.data).toMatchObject({ contextLimit: 2000, warnRatio: 0.6 });
    expect(event.data.tokens).toBe(appended.json().activeTokens);
  });

  it('gives up after the configured attempts and logs every one', async () => {
    failFirst.set('/down', Number.POSITIVE_INFINITY);
    await seedConversation(stack, 'down', tau()[3]!.messages.slice(0, 4), { policy: { auto: false } });
    await stack.app.inject({
      method: 'PUT',
      url: '/v1/conversations/down/webhook',
      headers: stack.auth(),
      payload: { url: `${base}/down`, secret: SECRET },
    });
    const done = await waitForJob(stack, (await compact(stack, 'down')).id);
    await waitFor(async () => (await deliveries('conversationId=down&status=failed')).length === 1, 30_000);
    const [failed] = await deliveries('conversationId=down');
    expect(failed).toMatchObject({ status: 'failed', attempts: ATTEMPTS, lastStatusCode: 503, lastError: 'HTTP 503' });
    expect(failed!.attemptLog.map((a) => a.statusCode)).toEqual(Array(ATTEMPTS).fill(503));
    expect(eventsFor('/down', done.id)).toHaveLength(ATTEMPTS);
  });

  it('re-enqueues a recorded delivery that Redis never got (the sweep), once', async () => {
    await seedConversation(stack, 'lost', tau()[4]!.messages.slice(0, 4), { policy: { auto: false } });
    const conversation = await conversationByExternalId(stack.db.db, 'lost');
    // what a process leaves behind when Redis refuses the enqueue after the row committed
    const id = await recordWebhookEvent(stack.db.db, {
      tenantId: conversation.tenantId,
      conversationId: conversation.id,
      conversationExternalId: 'lost',
      type: 'context.warning',
      data: { note: 'recorded, never queued' },
    });
    expect(id).not.toBeNull();
    await stack.db.db.execute(sql`update webhook_deliveries set updated_at = now() - interval '5 minutes' where id = ${id}`);
    const workerDeps = stack.workerDeps!;
    const sweepDeps = { ...workerDeps, webhooks: workerDeps.webhooks! };
    expect(await sweepWebhookDeliveries(sweepDeps)).toBe(1);
    await waitFor(() => received.some((r) => r.headers['compactd-delivery'] === id && r.answered === 200), 30_000);
    await waitFor(async () => (await deliveries('conversationId=lost'))[0]?.['status'] === 'delivered', 10_000);
    await stack.db.db.execute(sql`update webhook_deliveries set updated_at = now() - interval '5 minutes' where id = ${id}`);
    expect(await sweepWebhookDeliveries(sweepDeps)).toBe(0);
    expect(received.filter((r) => r.headers['compactd-delivery'] === id && r.answered === 200)).toHaveLength(1);
  });
});
