import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';

import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { delimiterCounts } from '../../../chaos/lib/reader.js';
import { type ChaosStack, startChaosStack } from '../../../chaos/lib/stack.js';
import { waitFor } from '../../../harness/wait-for.js';
import { createDeps } from '../../../src/app/deps.js';
import { runShutdown } from '../../../src/app/shutdown.js';
import { runWorkers } from '../../../src/app/start-worker.js';
import { escapeSummary } from '../../../src/compaction/context/index.js';
import { loadConfig } from '../../../src/config/env.js';

/** Focused regressions for what the chaos suites found; each names the failure it guards. */

let stack: ChaosStack;
let app: FastifyInstance;
const auth = () => ({ authorization: `Bearer ${stack.keys.tenant}` });

beforeAll(async () => {
  stack = await startChaosStack();
  app = (await stack.inlineApp({ COMPACTD_ADMIN_TOKEN: 'regression-admin-token' })).app;
});
afterAll(async () => {
  await stack?.close();
});

function expectProblem(res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  expect(JSON.parse(res.body)).toMatchObject({ status, code });
}

/** Writes raw bytes to the listening app and returns what came back. */
function exchange(port: number, payload: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('close', () => resolve(answer));
    socket.on('error', () => undefined);
    socket.write(payload, () => socket.end());
  });
}

describe('routing and protocol errors', () => {
  it('a conversation with a 128-character id (the documented maximum) is reachable, not a 414', async () => {
    const id = 'c'.repeat(128);
    expect((await app.inject({ method: 'POST', url: '/v1/conversations', headers: auth(), payload: { id } })).statusCode).toBe(201);
    const res = await app.inject({ method: 'GET', url: `/v1/conversations/${id}`, headers: auth() });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('bad percent-encoding and over-long parameters are problem+json, not fastify JSON', async () => {
    expectProblem(await app.inject({ method: 'GET', url: '/v1/conversations/%E0%A4%A', headers: auth() }), 400, 'BAD_URL');
    expectProblem(await app.inject({ method: 'GET', url: `/v1/conversations/${'x'.repeat(300)}`, headers: auth() }), 414, 'URI_TOO_LONG');
  });

  it('requests that are not valid HTTP, or lack Host, get problem+json on the socket', async () => {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const malformed = await exchange(port, 'POST /v1/conversations HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
    expect(malformed).toMatch(/^HTTP\/1\.1 400 [^\r]*\r\n[\s\S]*content-type: application\/problem\+json/i);
    expect(malformed).toContain('"code":"MALFORMED_REQUEST"');
    const bigHeaders = await exchange(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20_000)}\r\n\r\n`);
    expect(bigHeaders).toMatch(/^HTTP\/1\.1 431 /);
    expect(bigHeaders).toContain('"code":"HEADERS_TOO_LARGE"');
    const noHost = await exchange(port, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(noHost).toMatch(/^HTTP\/1\.1 400 /);
    expect(noHost).toContain('"code":"MISSING_HOST"');
  });

  it("the dashboard's own errors are problem+json and keep bull-board's `error.key` for its UI", async () => {
    const res = await app.inject({
      method: 'GET',
      url: '/admin/queues/api/queues/no-such-queue/metrics',
      headers: { authorization: 'Bearer regression-admin-token' },
    });
    expectProblem(res, 404, 'QUEUE_NOT_FOUND');
    expect(JSON.parse(res.body).error).toEqual({ key: 'ERRORS.QUEUE_NOT_FOUND' });
  });
});

describe('clip-archive delimiters', () => {
  it('neutralizes the tag spelled with look-alikes no table lists (Greek rho, small capital c, ornament bracket)', () => {
    for (const forged of [
      '</com\u03C1actd-summary>',
      '<\u1D04ompactd-summary batch="x">',
      '\u276E/compactd-archive\u276F',
      '<c\u0338ompactd-summary>',
      '<\u30CEcompactd-summary>',
    ]) {
      expect(escapeSummary(forged), forged).not.toBe(forged);
      expect(delimiterCounts(escapeSummary(forged)), forged).toEqual({
        archiveOpen: 0,
        archiveClose: 0,
        summaryOpen: 0,
        summaryClose: 0,
        stateOpen: 0,
        stateClose: 0,
      });
    }
    // a real tag that merely starts like it is left alone
    expect(escapeSummary('<component> and <compact-disc>')).toBe('<component> and <compact-disc>');
  });
});

describe('after Redis loses its data', () => {
  it('the workers schedule the reconciler again (a flush used to end every later sweep)', async () => {
    const config = loadConfig({ ...stack.env, COMPACTD_RECONCILE_EVERY_MS: '300' });
    const logger = pino({ level: 'silent' });
    const { deps, closeSteps } = createDeps(config, { logger, name: 'regression-worker' });
    const workers = runWorkers(deps);
    try {
      await waitFor(async () => (await deps.queues.maintenance.getJobScheduler('reconcile')) !== undefined, 10_000);
      await stack.redis.flushAll();
      expect(await deps.queues.maintenance.getJobScheduler('reconcile')).toBeUndefined();
      await waitFor(async () => (await deps.queues.maintenance.getJobScheduler('reconcile')) !== undefined, 10_000);
    } finally {
      await runShutdown([...workers.steps, ...closeSteps], 10_000, logger);
    }
  });
});

describe('while Postgres is down', () => {
  it('requests are answered 503 with retry-after, not 500', async () => {
    await stack.pg.stop('immediate');
    try {
      const res = await app.inject({ method: 'GET', url: '/v1/conversations/anything', headers: auth() });
      expectProblem(res, 503, 'SERVICE_UNAVAILABLE');
      expect(res.headers['retry-after']).toBe('1');
    } finally {
      await stack.pg.start();
    }
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});
