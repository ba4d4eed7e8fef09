import { Writable } from 'node:stream';

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { REDACTED_PATHS } from '../../../src/obs/logger.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';

/** The API writes one log line per request, when it completes: what it was, how it ended, how long it took. */

const lines: Array<Record<string, unknown>> = [];
let t: TestApi;

beforeAll(async () => {
  const sink = new Writable({
    write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk)) as Record<string, unknown>), done()),
  });
  t = await createTestApi({ logger: pino({ level: 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink) });
});
afterAll(async () => {
  await t?.close();
});

describe('request log', () => {
  it('writes one line per request with its method, route, status and time, and never the key', async () => {
    lines.length = 0;
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: { ...t.auth(), 'x-request-id': 'req-log-1' },
      payload: { id: 'logged' },
    });
    expect(created.statusCode).toBe(201);
    const missing = await t.app.inject({
      method: 'GET',
      url: '/v1/conversations/nope',
      headers: { ...t.auth(), 'x-request-id': 'req-log-2' },
    });
    expect(missing.statusCode).toBe(404);

    const byRequest = (id: string) => lines.filter((line) => line['reqId'] === id);
    // one line, when it completes: no separate "incoming request" line
    expect(byRequest('req-log-1')).toHaveLength(1);
    expect(lines.some((line) => line['msg'] === 'incoming request')).toBe(false);
    expect(byRequest('req-log-1')[0]).toMatchObject({
      msg: 'request completed',
      req: { method: 'POST', url: '/v1/conversations' },
      res: { statusCode: 201 },
    });
    expect(byRequest('req-log-1')[0]!['responseTime']).toEqual(expect.any(Number));
    expect(byRequest('req-log-2').find((line) => line['msg'] === 'request completed')).toMatchObject({
      req: { method: 'GET', url: '/v1/conversations/nope' },
      res: { statusCode: 404 },
    });
    expect(JSON.stringify(lines)).not.toContain(t.key);
  });
});
