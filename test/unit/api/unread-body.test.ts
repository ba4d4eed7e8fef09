import { type ClientRequest, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';

import { unreadBodyHooks } from '../../../src/api/unread-body.js';

/**
 * The rest of a body answered before it arrived is read into nothing, for a bounded time: a
 * bare fastify app with a 1 kB body limit and the hooks as the API registers them.
 */

const DRAIN_MS = 300;
let app: FastifyInstance;

async function start(drainMs = DRAIN_MS): Promise<string> {
  app = Fastify({ bodyLimit: 1024 });
  const hooks = unreadBodyHooks(drainMs);
  app.addHook('onSend', hooks.onSend);
  app.addHook('onResponse', hooks.onResponse);
  app.addHook('preClose', hooks.preClose);
  app.post('/', async () => ({ ok: true }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  await app?.close();
});

/** Declares `declared` bytes and sends 1 kB every 20 ms until told to stop: a slow client. */
function trickle(url: string, declared: number) {
  const request: ClientRequest = httpRequest(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': String(declared) },
  });
  const timer = setInterval(() => request.write(Buffer.alloc(1024, 0x20)), 20);
  const response = new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
    request.on('response', (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, connection: res.headers.connection });
    });
    request.on('error', reject);
  });
  const closed = new Promise<void>((resolve) => request.on('close', () => resolve()));
  request.on('error', () => clearInterval(timer));
  request.on('close', () => clearInterval(timer));
  return { response, closed, stop: () => clearInterval(timer) };
}

describe('unreadBodyHooks', () => {
  it('answers a body over the limit while it still arrives, and keeps the connection for the rest of it', async () => {
    const url = await start();
    const client = trickle(url, 10 * 1024 * 1024);
    const answer = await client.response;
    expect(answer.status).toBe(413);
    expect(answer.connection).not.toBe('close');
  });

  it('closes the connection of a client still sending when the drain time is over', async () => {
    const url = await start();
    const client = trickle(url, 1024 * 1024 * 1024);
    expect((await client.response).status).toBe(413);
    const started = Date.now();
    await client.closed;
    expect(Date.now() - started).toBeLessThan(DRAIN_MS + 2_000);
  });

  it('ends a drain at shutdown instead of waiting it out', async () => {
    const url = await start(60_000);
    const client = trickle(url, 1024 * 1024 * 1024);
    expect((await client.response).status).toBe(413);
    const started = Date.now();
    await app.close();
    await client.closed;
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
