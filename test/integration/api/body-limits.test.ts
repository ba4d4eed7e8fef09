import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { GATEWAY_BODY_BYTES } from '../../../src/api/gateway/routes.js';
import { JSON_BODY_MAX_DEPTH } from '../../../src/lib/text-safety.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';

/**
 * Bodies over the size limit or nested past the depth bound get their 4xx, over a real
 * connection: the API's in problem+json, the gateway's in the provider's error shape.
 */

const MB = 1024 * 1024;
let t: TestApi;
let base: string;

beforeAll(async () => {
  t = await createTestApi();
  const created = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id: 'limits' } });
  expect(created.statusCode, created.body).toBe(201);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await t?.close();
});

interface Answer {
  status: number;
  contentType: string;
  body: unknown;
}

/**
 * POSTs `bytes` of JSON-looking body with its content-length, written in 256 kB pieces as
 * the socket takes them, the way a client streams a file: the server can answer while the
 * body is still being written. Rejects with the connection's error (EPIPE, ECONNRESET) when
 * no answer arrives.
 */
function postStreaming(path: string, headers: Record<string, string>, bytes: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = Buffer.alloc(bytes, 0x20);
    body.write('{"messages":[');
    const request = httpRequest(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(bytes), ...headers },
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, contentType: String(response.headers['content-type']), body: JSON.parse(text) });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    const piece = 256 * 1024;
    let at = 0;
    const pump = (): void => {
      while (at < bytes) {
        const more = request.write(body.subarray(at, at + piece));
        at += piece;
        if (!more) {
          request.once('drain', () => setTimeout(pump, 1));
          return;
        }
      }
      request.end();
    };
    pump();
  });
}

describe('a body over the size limit', () => {
  // Before: the answer was written and the socket closed with the body still arriving; the
  // client, still writing, got EPIPE every time.
  it('is answered 413 problem+json naming `body` when a 20 MB append is still being written', async () => {
    for (let run = 0; run < 3; run++) {
      const answer = await postStreaming('/v1/conversations/limits/messages', t.auth(), 20 * MB);
      expect(answer.status).toBe(413);
      expect(answer.contentType).toContain('application/problem+json');
      expect(answer.body).toMatchObject({ status: 413, code: 'BODY_TOO_LARGE', errors: [{ field: 'body' }] });
    }
  });

  // A client that asked to close (node:http with keepAlive off sends `connection: close`) was
  // closed on at once, its body still arriving: on a busy host its EPIPE came before the 413.
  it('is answered 413 while still being written by a client that asked for `connection: close`', async () => {
    for (let run = 0; run < 3; run++) {
      const answer = await postStreaming('/v1/conversations/limits/messages', { ...t.auth(), connection: 'close' }, 20 * MB);
      expect(answer.status).toBe(413);
      expect(answer.body).toMatchObject({ code: 'BODY_TOO_LARGE', errors: [{ field: 'body' }] });
    }
  });

  it('is answered 413 to fetch streaming its body', async () => {
    const piece = new Uint8Array(256 * 1024).fill(0x20);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 20 * MB) controller.close();
        else {
          sent += piece.length;
          controller.enqueue(piece);
        }
      },
    });
    const res = await fetch(`${base}/v1/conversations/limits/messages`, {
      method: 'POST',
      headers: { ...t.auth(), 'content-type': 'application/json', 'content-length': String(20 * MB) },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: 'BODY_TOO_LARGE', errors: [{ field: 'body' }] });
  });

  it('is answered 413 in the Anthropic error shape by the gateway (over its 32 MB)', async () => {
    const answer = await postStreaming('/gateway/anthropic/v1/messages', { 'x-api-key': t.key }, GATEWAY_BODY_BYTES + MB);
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ type: 'error', error: { type: 'request_too_large', field: 'body' } });
  });
});

describe('a body nested past the depth bound', () => {
  const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  /** an assistant turn whose tool input holds `value` */
  const toolTurn = (value: string) =>
    `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"probe","input":{"value":${value}}}]}`;

  it('is a 400 naming `body` on the API, not a walk of 200,000 levels', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/conversations/limits/messages',
      headers: { ...t.auth(), 'content-type': 'application/json' },
      payload: `{"messages":[${toolTurn(deep(200_000))}]}`,
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ code: 'BODY_TOO_DEEP', errors: [{ field: 'body' }] });
  });

  it("leaves a body under the bound to the fields' own rules (a message past its depth is named)", async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/conversations/limits/messages',
      headers: { ...t.auth(), 'content-type': 'application/json' },
      payload: `{"messages":[${toolTurn(deep(JSON_BODY_MAX_DEPTH - 20))}]}`,
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().errors[0].field).toMatch(/^body\.messages\.0/);
  });

  it.each([
    ['anthropic', '/gateway/anthropic/v1/messages', { type: 'error', error: { type: 'invalid_request_error', field: 'body' } }],
    ['openai', '/gateway/openai/v1/chat/completions', { error: { type: 'invalid_request_error', param: 'body' } }],
  ])('is a 400 in the %s error shape from the gateway, not a 500', async (_provider, url, shape) => {
    const res = await t.app.inject({
      method: 'POST',
      url,
      headers: { 'x-api-key': t.key, 'content-type': 'application/json' },
      payload: `{"model":"claude-sonnet-4-5","max_tokens":16,"messages":[{"role":"user","content":"hi"},${toolTurn(deep(200_000))}]}`,
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject(shape);
  });
});
