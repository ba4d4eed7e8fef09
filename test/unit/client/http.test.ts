import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { type CompactdError, createClient, isCompactdError, parseRetryAfter } from 'compactd/client';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The client's HTTP behaviour (retries, retry-after, errors, timeouts, streaming) against a
 * loopback server that answers from a script: statuses the real service rarely produces
 * on demand (429, 503, a proxy's HTML 502) are easy to stage here.
 */

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  at: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse, index: number) => void;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function serve(handler: Handler): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, at: Date.now() });
    req.resume();
    req.on('end', () => handler(req, res, seen.length - 1));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen };
}

const problem = (res: ServerResponse, status: number, code: string, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/problem+json', ...headers });
  res.end(
    JSON.stringify({
      type: `https://compactd.dev/problems/${code.toLowerCase()}`,
      title: 'Too Many Requests',
      status,
      code,
      detail: `${code} detail`,
    }),
  );
};
const json = (res: ServerResponse, body: unknown, status = 200) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

async function caught(promise: Promise<unknown>): Promise<CompactdError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isCompactdError(error)) throw new Error(`expected a CompactdError, got ${String(error)}`);
  return error;
}

describe('client retries', () => {
  it('waits what retry-after asks on 429, then succeeds with the same Idempotency-Key', async () => {
    const { url, seen } = await serve((_req, res, i) =>
      i === 0 ? problem(res, 429, 'RATE_LIMITED', { 'retry-after': '1' }) : json(res, { id: 'c1' }, 201),
    );
    const client = createClient({ baseUrl: url, apiKey: 'k' });
    const created = await client.createConversation({ id: 'c1' });
    expect(created.id).toBe('c1');
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);
    expect(seen[0]!.headers['idempotency-key']).toEqual(expect.any(String));
    expect(seen[1]!.headers['idempotency-key']).toBe(seen[0]!.headers['idempotency-key']);
    expect(seen[0]!.headers['authorization']).toBe('Bearer k');
  });

  it('retries 503 with an HTTP-date retry-after', async () => {
    const { url, seen } = await serve((_req, res, i) =>
      i < 2 ? problem(res, 503, 'UNAVAILABLE', { 'retry-after': new Date(Date.now() + 1000).toUTCString() }) : json(res, { status: 'ok' }),
    );
    expect(await createClient({ baseUrl: url }).health()).toEqual({ status: 'ok' });
    expect(seen).toHaveLength(3);
  });

  it('gives up after `retries` and throws the last problem with retryAfterMs', async () => {
    const { url, seen } = await serve((_req, res) => problem(res, 429, 'RATE_LIMITED', { 'retry-after': '0' }));
    const error = await caught(createClient({ baseUrl: url, retries: 2 }).getConversation('x'));
    expect(error).toMatchObject({
      status: 429,
      code: 'RATE_LIMITED',
      title: 'Too Many Requests',
      detail: 'RATE_LIMITED detail',
      retryAfterMs: 0,
    });
    expect(seen).toHaveLength(3);
  });

  it('does not wait out a retry-after beyond maxRetryDelayMs', async () => {
    const { url, seen } = await serve((_req, res) => problem(res, 429, 'RATE_LIMITED', { 'retry-after': '120' }));
    const started = Date.now();
    const error = await caught(createClient({ baseUrl: url, maxRetryDelayMs: 5_000 }).getConversation('x'));
    expect(error.retryAfterMs).toBe(120_000);
    expect(seen).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('never retries other errors; a non-problem body becomes HTTP_<status>', async () => {
    const { url, seen } = await serve((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>bad gateway</html>');
    });
    const error = await caught(createClient({ baseUrl: url }).getConversation('x'));
    expect(error).toMatchObject({ status: 502, code: 'HTTP_502', detail: '<html>bad gateway</html>', errors: [] });
    expect(seen).toHaveLength(1);
  });

  it('retries connection failures of GETs and POSTs (idempotency key), never of DELETEs', async () => {
    const { url, seen } = await serve((_req, res) => res.socket?.destroy());
    const client = createClient({ baseUrl: url, retries: 2 });
    expect(await caught(client.getJob('00000000-0000-4000-8000-000000000000'))).toMatchObject({ status: 0, code: 'CONNECTION_FAILED' });
    expect(seen).toHaveLength(3);
    await caught(client.compact('c'));
    expect(seen).toHaveLength(6);
    expect(new Set(seen.slice(3).map((s) => s.headers['idempotency-key'])).size).toBe(1);
    await caught(client.cancelJob('00000000-0000-4000-8000-000000000000'));
    expect(seen).toHaveLength(7);
  });
});

describe('client limits and streams', () => {
  it('times out a request that gets no answer, and honours an AbortSignal', async () => {
    const { url } = await serve(() => {});
    const client = createClient({ baseUrl: url, timeoutMs: 300, retries: 0 });
    expect(await caught(client.getConversation('x'))).toMatchObject({ status: 0, code: 'TIMEOUT' });
    const controller = new AbortController();
    const pending = caught(createClient({ baseUrl: url }).getConversation('x', { signal: controller.signal }));
    controller.abort();
    expect(await pending).toMatchObject({ code: 'ABORTED' });
  });

  it('gives a long poll its wait on top of the timeout', async () => {
    const { url, seen } = await serve((_req, res) => setTimeout(() => json(res, { id: 'j', status: 'completed' }), 600));
    const job = await createClient({ baseUrl: url, timeoutMs: 300 }).getJob('j', { waitSeconds: 2 });
    expect(job.status).toBe('completed');
    expect(seen[0]!.url).toBe('/v1/jobs/j?wait=2');
  });

  it('streams export lines split across chunks, and parses a last line without a newline', async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"seq":1,"role":"user"}\n{"seq":2,');
      setTimeout(() => res.end('"role":"assistant"}\n\n{"seq":3,"role":"user"}'), 50);
    });
    const seqs: number[] = [];
    for await (const line of createClient({ baseUrl: url }).exportConversation('c')) seqs.push(line.seq);
    expect(seqs).toEqual([1, 2, 3]);
  });

  it('reports a line that is not JSON with its number', async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end('{"seq":1}\nnot json\n');
    });
    const lines = createClient({ baseUrl: url }).exportConversation('c');
    const error = await caught(
      (async () => {
        for await (const _line of lines) void _line;
      })(),
    );
    expect(error).toMatchObject({ code: 'INVALID_RESPONSE', detail: expect.stringContaining('line 2') });
  });

  it('encodes path segments and drops undefined query values', async () => {
    const { url, seen } = await serve((_req, res) => json(res, { messages: [], nextAfter: null }));
    await createClient({ baseUrl: `${url}/` }).listMessages('a b/c', { limit: 5 });
    expect(seen[0]!.url).toBe('/v1/conversations/a%20b%2Fc/messages?limit=5');
  });
});

describe('parseRetryAfter', () => {
  it.each([
    ['2', 2000],
    ['0.5', 500],
    ['0', 0],
    ['-3', 0],
    ['Thu, 01 Jan 1970 00:00:10 GMT', 5000],
    ['soon', undefined],
    ['', undefined],
  ])('%j → %j ms', (value, expected) => {
    expect(parseRetryAfter(value, 5000)).toBe(expected);
  });
  it('treats a missing header as no advice', () => {
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
