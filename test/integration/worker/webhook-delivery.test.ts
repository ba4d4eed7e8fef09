import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { eq } from 'drizzle-orm';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TEST_REDIS_URL } from '../../../harness/service-urls.js';
import { ensureTenant } from '../../../src/db/repos/api-keys.js';
import { insertConversation } from '../../../src/db/repos/conversations.js';
import { recordWebhookEvent, upsertWebhookEndpoint } from '../../../src/db/repos/webhooks.js';
import { webhookDeliveries } from '../../../src/db/schema.js';
import { EMPTY_ALLOW_LIST, type HostResolver, parseWebhookAllowList, type WebhookAllowList } from '../../../src/lib/webhook-target.js';
import { createWebhookQueue } from '../../../src/queue/webhooks.js';
import type { WebhookSettings } from '../../../src/worker/deps.js';
import { processWebhookDelivery, WebhookDeliveryError } from '../../../src/worker/processors/webhook.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

/**
 * The connect-time target check against a real receiver on loopback and real Postgres: the
 * webhook was accepted when it was set (an allow-list since changed, or a DNS answer since
 * changed), and the delivery must still not reach a refused address.
 */

interface Hit {
  host: string | undefined;
  path: string;
}

let db: TestDatabase;
let redis: Redis;
let settings: Omit<WebhookSettings, 'allow' | 'resolveHost'>;
let receiver: Server;
let port: number;
const hits: Hit[] = [];
let tenantId: string;
let conversationId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  settings = {
    queue: createWebhookQueue(redis, `t${randomUUID().replaceAll('-', '').slice(0, 12)}`),
    attempts: 3,
    backoffMs: 10,
    timeoutMs: 5_000,
  };
  receiver = createServer((request, response) => {
    hits.push({ host: request.headers.host, path: request.url ?? '/' });
    request.resume();
    request.on('end', () => {
      if (request.url === '/broken')
        response.writeHead(500, { 'content-type': 'text/plain' }).end('redis_version:7.2.4 internal-db.corp:5432');
      else response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as AddressInfo).port;
  tenantId = (await ensureTenant(db.db, 'hooks-tenant')).id;
  conversationId = (await insertConversation(db.db, {
    tenantId,
    externalId: 'hooked',
    model: null,
    contextLimit: 10_000,
    policy: {},
    metadata: {},
  }))!.id;
});
afterAll(async () => {
  await settings?.queue.close();
  redis?.disconnect();
  await new Promise((resolve) => receiver?.close(resolve));
  await db?.drop();
});

const allowList = (text: string): WebhookAllowList => {
  const parsed = parseWebhookAllowList(text);
  if (!parsed.ok) throw new Error(parsed.invalid.join());
  return parsed.value;
};
/** A resolver that answers what a DNS server under an attacker's control would. */
const answering =
  (...addresses: string[]): HostResolver =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

/** Sets the conversation's webhook straight in the database (as it was accepted earlier) and records one event. */
async function deliveryTo(url: string): Promise<string> {
  await upsertWebhookEndpoint(db.db, { tenantId, conversationId, url, secret: 'whsec_integration_0123456789', events: [], enabled: true });
  const id = await recordWebhookEvent(db.db, {
    tenantId,
    conversationId,
    conversationExternalId: 'hooked',
    type: 'context.warning',
    data: {},
  });
  return id!;
}

async function attempt(
  id: string,
  allow: WebhookAllowList,
  resolveHost?: HostResolver,
  final = false,
): Promise<typeof webhookDeliveries.$inferSelect> {
  const webhooks: WebhookSettings = { ...settings, allow, ...(resolveHost ? { resolveHost } : {}) };
  try {
    await processWebhookDelivery({ deliveryId: id }, { db: db.db, logger: pino({ level: 'silent' }), webhooks }, { final });
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookDeliveryError);
  }
  const [row] = await db.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
  return row!;
}

const hitsOn = (path: string) => hits.filter((h) => h.path === path);

describe('webhook delivery: the target is checked again when connecting', () => {
  it('refuses `localhost` once the allow-list that admitted it is gone, and delivers while it allows it', async () => {
    const refused = await attempt(await deliveryTo(`http://localhost:${port}/by-name`), EMPTY_ALLOW_LIST);
    expect(refused).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: null, lastError: 'target_not_allowed' });
    expect(hitsOn('/by-name')).toEqual([]);

    const delivered = await attempt(await deliveryTo(`http://localhost:${port}/by-name`), allowList('localhost'));
    expect(delivered).toMatchObject({ status: 'delivered', lastStatusCode: 204, lastError: null });
    expect(hitsOn('/by-name')).toHaveLength(1);
  });

  it('refuses a name whose DNS answer turned to loopback (rebinding), checking every address of the answer', async () => {
    const id = await deliveryTo(`http://hooks.rebind.test:${port}/rebind`);
    expect(await attempt(id, EMPTY_ALLOW_LIST, answering('127.0.0.1'))).toMatchObject({
      status: 'failed',
      lastError: 'target_not_allowed',
    });
    const mixed = await deliveryTo(`http://hooks.rebind.test:${port}/rebind`);
    expect(await attempt(mixed, EMPTY_ALLOW_LIST, answering('93.184.215.14', '::ffff:127.0.0.1'))).toMatchObject({
      status: 'failed',
      lastError: 'target_not_allowed',
    });
    expect(hitsOn('/rebind')).toEqual([]);
  });

  it('connects to the address it checked, with the name kept in the Host header', async () => {
    // The name exists in no DNS: the request can only reach the receiver through the checked answer.
    const id = await deliveryTo(`http://hooks.rebind.test:${port}/checked`);
    expect(await attempt(id, allowList('127.0.0.0/8'), answering('127.0.0.1'))).toMatchObject({ status: 'delivered', lastStatusCode: 204 });
    expect(hitsOn('/checked')).toEqual([{ host: `hooks.rebind.test:${port}`, path: '/checked' }]);
  });

  it.each(['127.0.0.1', '2130706433', '0x7f.1', '127.1', '[::ffff:127.0.0.1]'])(
    'refuses the address literal %s without a lookup',
    async (host) => {
      const noLookup: HostResolver = async () => {
        throw new Error('an address literal must not be looked up');
      };
      const row = await attempt(await deliveryTo(`http://${host}:${port}/literal`), EMPTY_ALLOW_LIST, noLookup);
      expect(row).toMatchObject({ status: 'failed', lastError: 'target_not_allowed' });
      expect(hitsOn('/literal')).toEqual([]);
    },
  );

  it('logs only a generic code for a connection that fails, and only the status of an answer', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));

    const refusedConnection = await attempt(await deliveryTo(`http://127.0.0.1:${closedPort}/nothing`), allowList('127.0.0.1'));
    expect(refusedConnection).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null, lastError: 'connection_failed' });
    const unresolvable = await attempt(await deliveryTo(`http://no-such-host.invalid:${port}/x`), EMPTY_ALLOW_LIST, undefined, true);
    expect(unresolvable).toMatchObject({ status: 'failed', lastError: 'connection_failed' });

    const broken = await attempt(await deliveryTo(`http://127.0.0.1:${port}/broken`), allowList('127.0.0.1'));
    expect(broken).toMatchObject({ status: 'pending', lastStatusCode: 500, lastError: 'HTTP 500' });
    const stored = JSON.stringify([refusedConnection, unresolvable, broken].map((row) => [row.attemptLog, row.lastError]));
    for (const leak of ['ECONNREFUSED', 'ENOTFOUND', String(closedPort), 'redis_version', 'internal-db'])
      expect(stored).not.toContain(leak);
  });
});
