import { Agent, type OutgoingHttpHeaders, request as httpRequest } from 'node:http';

import type { FastifyInstance } from 'fastify';

import type { NormalizedMessage } from '../../src/compaction/types.js';

/** A response as the suites see it, whether it came over a socket or through `app.inject`. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

export interface RequestOptions {
  body?: unknown;
  /** sent as-is instead of JSON-encoding `body` */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** the API key to send; null sends no Authorization header */
  key?: string | null;
}

export interface Http {
  request(method: string, url: string, options?: RequestOptions): Promise<HttpResponse>;
}

function makeResponse(status: number, headers: Record<string, string>, text: string): HttpResponse {
  return { status, headers, text, json: <T>() => JSON.parse(text) as T };
}

/** Node's header object (a value may be a list or a number) as one string per name. */
function joinedHeaders(raw: OutgoingHttpHeaders): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return headers;
}

function buildHeaders(defaultKey: string, options: RequestOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const key = options.key === undefined ? defaultKey : options.key;
  if (key !== null) headers['authorization'] = `Bearer ${key}`;
  if (options.body !== undefined && options.rawBody === undefined) headers['content-type'] = 'application/json';
  return { ...headers, ...options.headers };
}

/** HTTP over real sockets (the global fetch, keep-alive) to a listening API. */
export function fetchHttp(baseUrl: string, key: string, timeoutMs = 30_000): Http {
  return {
    async request(method, url, options = {}) {
      const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
      const res = await fetch(`${baseUrl}${url}`, {
        method,
        headers: buildHeaders(key, options),
        ...(body === undefined ? {} : { body }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const headers: Record<string, string> = {};
      res.headers.forEach((value, name) => (headers[name] = value));
      return makeResponse(res.status, headers, await res.text());
    },
  };
}

/**
 * HTTP over node:http with a keep-alive agent. The load suite's clients share the harness's
 * event loop, and a request answered while that loop is busy is timed late: fetch spent about
 * 1 ms of the harness's CPU per request (web streams, an AbortSignal and its timer, Headers),
 * this a fraction of it, so the clients' own work adds less to the latencies they measure.
 */
export function nodeHttp(baseUrl: string, key: string, timeoutMs = 30_000): Http {
  const base = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true });
  return {
    request(method, url, options = {}) {
      const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
      return new Promise<HttpResponse>((resolve, reject) => {
        const req = httpRequest(
          { agent, host: base.hostname, port: base.port, method, path: url, headers: buildHeaders(key, options), timeout: timeoutMs },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('error', reject);
            res.on('end', () =>
              resolve(makeResponse(res.statusCode ?? 0, joinedHeaders(res.headers), Buffer.concat(chunks).toString('utf8'))),
            );
          },
        );
        req.on('timeout', () => req.destroy(new Error(`${method} ${url}: no answer within ${timeoutMs} ms`)));
        req.on('error', reject);
        req.end(body);
      });
    },
  };
}

/** The same requests through `app.inject` (no socket). */
export function injectHttp(app: FastifyInstance, key: string): Http {
  return {
    async request(method, url, options = {}) {
      const payload = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
      const res = await app.inject({
        method: method as 'GET',
        url,
        headers: buildHeaders(key, options),
        ...(payload === undefined ? {} : { payload }),
      });
      return makeResponse(res.statusCode, joinedHeaders(res.headers), res.body);
    },
  };
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function expectStatus(res: Promise<HttpResponse>, ok: number[], what: string): Promise<HttpResponse> {
  const r = await res;
  if (!ok.includes(r.status)) throw new HttpError(r.status, `${what}: HTTP ${r.status} ${r.text.slice(0, 500)}`);
  return r;
}

export interface AppendedMessage {
  id: string;
  seq: number;
  tokens: number;
}

/** The API calls every suite makes, with errors for unexpected statuses. */
export function apiCalls(http: Http) {
  return {
    createConversation: async (id: string, body: Record<string, unknown> = {}) =>
      (await expectStatus(http.request('POST', '/v1/conversations', { body: { id, ...body } }), [201], `create ${id}`)).json(),
    append: async (id: string, messages: readonly NormalizedMessage[], headers: Record<string, string> = {}) =>
      (
        await expectStatus(
          http.request('POST', `/v1/conversations/${id}/messages`, { body: { messages }, headers }),
          [201],
          `append to ${id}`,
        )
      ).json<{
        messages: AppendedMessage[];
        activeTokens: number;
      }>(),
    compact: async (id: string, options: Record<string, unknown> = {}) =>
      (
        await expectStatus(http.request('POST', `/v1/conversations/${id}/compactions`, { body: options }), [200, 202], `compact ${id}`)
      ).json<{
        id: string;
        status: string;
        deduplicated?: boolean;
      }>(),
    job: async (jobId: string, waitSeconds = 0) =>
      (
        await expectStatus(http.request('GET', `/v1/jobs/${jobId}${waitSeconds > 0 ? `?wait=${waitSeconds}` : ''}`), [200], `job ${jobId}`)
      ).json<JobView>(),
  };
}

export interface JobView {
  id: string;
  conversationId: string;
  status: string;
  progress: { chunksDone: number; chunksTotal: number };
  result: (Record<string, unknown> & { fallbacks?: unknown[]; batchIds?: string[]; clipArchiveSeq?: number | null }) | null;
  error: { code: string; message: string } | null;
}
