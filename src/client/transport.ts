import { type Attempt, type FetchLike, type HttpSettings, requestEmpty, requestJson, type RequestSpec, send } from './http.js';

export interface ClientOptions {
  /** e.g. `http://127.0.0.1:8080` */
  baseUrl: string;
  /** sent as `Authorization: Bearer <apiKey>` */
  apiKey?: string | undefined;
  /** default: the global fetch */
  fetch?: FetchLike | undefined;
  /** extra attempts on 429/503 (and connection failures of idempotent requests); default 3 */
  retries?: number | undefined;
  /** per-request time limit, long polls get their wait on top; default 60 s */
  timeoutMs?: number | undefined;
  /** a `retry-after` above this is not waited out; default 30 s */
  maxRetryDelayMs?: number | undefined;
  /** extra headers on every request */
  headers?: Record<string, string> | undefined;
}

export interface RequestOptions {
  signal?: AbortSignal | undefined;
}

/** POSTs: a key is generated per call when none is given, so retries never store anything twice. */
export interface PostOptions extends RequestOptions {
  idempotencyKey?: string | undefined;
}

/** The verbs the route groups use; every one goes through `send` (auth, timeout, retries, errors). */
export interface Transport {
  get<T>(path: string, query?: RequestSpec['query'], extra?: Partial<RequestSpec>): Promise<T>;
  post<T>(path: string, body: unknown, opts?: PostOptions): Promise<T>;
  put<T>(path: string, body: unknown, opts?: RequestOptions): Promise<T>;
  patch<T>(path: string, body: unknown, opts?: RequestOptions): Promise<T>;
  /** a DELETE answered with a body (cancel answers with the job) */
  deleteJson<T>(path: string, opts?: RequestOptions): Promise<T>;
  /** a DELETE answered 204 */
  remove(path: string, opts?: RequestOptions): Promise<void>;
  /** a GET whose body the caller streams */
  stream(path: string, query: RequestSpec['query'], opts?: RequestOptions): Promise<Attempt>;
}

export const enc = encodeURIComponent;

export function createTransport(options: ClientOptions): Transport {
  const http: HttpSettings = {
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    retries: options.retries ?? 3,
    timeoutMs: options.timeoutMs ?? 60_000,
    maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
    headers: options.headers ?? {},
  };
  return {
    get: async <T>(path: string, query?: RequestSpec['query'], extra: Partial<RequestSpec> = {}) =>
      (await requestJson<T>(http, { method: 'GET', path, query, idempotent: true, ...extra })).body,
    post: async <T>(path: string, body: unknown, opts: PostOptions = {}) => {
      const key = opts.idempotencyKey ?? globalThis.crypto.randomUUID();
      return (
        await requestJson<T>(http, {
          method: 'POST',
          path,
          body,
          headers: { 'idempotency-key': key },
          signal: opts.signal,
          idempotent: true,
        })
      ).body;
    },
    // A PUT replaces: repeating it after a lost connection changes nothing more.
    put: async <T>(path: string, body: unknown, opts: RequestOptions = {}) =>
      (await requestJson<T>(http, { method: 'PUT', path, body, signal: opts.signal, idempotent: true })).body,
    // The service's PATCHes replace the fields they name, so a repeat changes nothing more either.
    patch: async <T>(path: string, body: unknown, opts: RequestOptions = {}) =>
      (await requestJson<T>(http, { method: 'PATCH', path, body, signal: opts.signal, idempotent: true })).body,
    // DELETEs are not repeated after a lost connection: the repeat of one that landed would
    // answer 404 (webhook gone) or 409 (job already cancelled) for what in fact succeeded.
    remove: (path: string, opts: RequestOptions = {}) =>
      requestEmpty(http, { method: 'DELETE', path, signal: opts.signal, idempotent: false }),
    deleteJson: async <T>(path: string, opts: RequestOptions = {}) =>
      (await requestJson<T>(http, { method: 'DELETE', path, signal: opts.signal, idempotent: false })).body,
    stream: (path, query, opts = {}) => send(http, { method: 'GET', path, query, signal: opts.signal, idempotent: true }),
  };
}
