import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../harness/transcripts.js';
import { waitFor } from '../../../harness/wait-for.js';
import { verifyWebhookSignature } from '../../../src/worker/webhooks.js';
import { compact, seedConversation } from '../../helpers/conversation.js';
import { createWorkerFleet, type WorkerFleet } from '../../helpers/worker-fleet.js';

/**
 * Issue 15 §4: a worker SIGKILLed after a job's terminal commit and before it handed the
 * job's webhook delivery to Redis. The fault-injection point COMPACTD_FAULT_PAUSE_BEFORE_DISPATCH_MS
 * holds the first worker inside that window; a second worker's delivery sweep must find the
 * committed event and deliver it to a real receiver. The README promises at-least-once delivery
 * under a stable `compactd-delivery` id; here the dead worker never sent it, so it arrives once.
 */

const SECRET = 'whsec_outbox_crash_0123456789abcdef';
interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: string;
  signatureValid: boolean;
}

let server: Server;
let receiverUrl: string;
const received: Received[] = [];
let fleet: WorkerFleet;

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const signatureValid = verifyWebhookSignature({
        secret: SECRET,
        body,
        timestamp: request.headers['compactd-timestamp'] as string | undefined,
        signature: request.headers['compactd-signature'] as string | undefined,
      });
      received.push({ headers: request.headers, body, signatureValid });
      response.writeHead(signatureValid ? 200 : 401).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  // The receiver is on loopback (allowed by the operator's list); the sweep runs every half
  // second and takes up deliveries untouched for a second.
  fleet = await createWorkerFleet(
    {},
    { env: { COMPACTD_WEBHOOK_ALLOW: '127.0.0.1', COMPACTD_RECONCILE_EVERY_MS: '500', COMPACTD_RECONCILE_IDLE_MS: '1000' } },
  );
  const res = await fleet.stack.app.inject({
    method: 'PUT',
    url: '/v1/webhook',
    headers: fleet.stack.auth(),
    payload: { url: receiverUrl, secret: SECRET },
  });
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(async () => {
  await fleet?.close();
  await new Promise((resolve) => server?.close(resolve));
});

const messages = () => loadRealTranscript('tau-bench/gpt-4o-airline.json').conversations.find((c) => c.messages.length >= 30)!.messages;

async function deliveryRows(jobId: string) {
  return fleet.stack.db.db.execute<{ id: string; status: string; attempts: number; event: string }>(sql`
    select id, status, attempts, event from webhook_deliveries where body::jsonb #>> '{data,job,id}' = ${jobId}`);
}

/**
 * Waits until the reconcile scheduler (whose sweep re-sends pending deliveries) has moved its
 * next run on `n` times, so at least `n - 1` whole sweeps ran since the call.
 */
async function sweepsRun(n: number): Promise<void> {
  const seen = new Set<number>();
  await waitFor(
    async () => {
      const next = (await fleet.stack.deps.queues.maintenance.getJobScheduler('reconcile'))?.next;
      if (next !== undefined) seen.add(next);
      return seen.size > n;
    },
    30_000,
    50,
  );
}

describe('a worker SIGKILLed between the commit and the webhook dispatch', () => {
  it('loses no event: the next worker delivers it, once, under the id the commit recorded', async () => {
    const { stack, sim } = fleet;
    sim.control.setProfile('instant');
    await seedConversation(stack, 'outbox-crash', messages(), { policy: { auto: false } });
    // No sweep in the first worker: only a worker that starts after the kill may send the event.
    const first = fleet.startWorker({ COMPACTD_FAULT_PAUSE_BEFORE_DISPATCH_MS: '600000', COMPACTD_RECONCILE_EVERY_MS: '0' });
    const job = await compact(stack, 'outbox-crash', { strategy: 'summarize', keepRecent: 4 });

    await waitFor(() => first.output().includes('fault injection: pausing between the commit and the webhook dispatch'), 90_000, 50);
    const [status] = await stack.db.db.execute<{ status: string }>(sql`select status from compaction_jobs where id = ${job.id}`);
    expect(status?.status).toBe('completed');
    const committed = await deliveryRows(job.id);
    expect(committed).toEqual([expect.objectContaining({ status: 'pending', attempts: 0, event: 'compaction.completed' })]);
    first.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(received).toEqual([]);

    fleet.startWorker();
    await waitFor(async () => (await deliveryRows(job.id))[0]?.status === 'delivered', 60_000, 100);
    // A few more sweeps: nothing is sent again once the receiver accepted it.
    await sweepsRun(3);
    const deliveryId = committed[0]!.id;
    expect(received).toHaveLength(1);
    const [only] = received as [Received];
    expect(only.signatureValid).toBe(true);
    expect(only.headers['compactd-delivery']).toBe(deliveryId);
    expect(only.headers['compactd-event']).toBe('compaction.completed');
    const event = JSON.parse(only.body);
    expect(event).toMatchObject({ id: deliveryId, type: 'compaction.completed', conversationId: 'outbox-crash' });
    expect(event.data.job).toMatchObject({ id: job.id, status: 'completed', conversationId: 'outbox-crash' });
    expect(await deliveryRows(job.id)).toEqual([expect.objectContaining({ id: deliveryId, status: 'delivered', attempts: 1 })]);
  });
});
