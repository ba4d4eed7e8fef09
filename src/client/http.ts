import { CompactdError, errorFromResponse } from './errors.js';

/**
 * The client's one HTTP path: bearer auth, per-request timeout, retries on 429/503 that
 * honour `retry-after`, and problem+json errors turned into CompactdError.
 */

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface HttpSettings {
  baseUrl: string;
  apiKey: string | undefined;
  fetch: FetchLike;
  /** extra attempts after the first */
  retries: number;
  /** time allowed until the answer is read (until headers, for streams) */
  timeoutMs: number;
  /** a `retry-after` longer than this is not waited out: the error goes to the caller */
  maxRetryDelayMs: number;
  headers: Record<string, string>;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined> | undefined;
  body?: unknown;
  headers?: Record<string, string | undefined> | undefined;
  signal?: AbortSignal | undefined;
  /** added to `timeoutMs` (long polls) */
  extraTimeoutMs?: number | undefined;
  /**
   * A connection failure is retried only when repeating the request cannot do anything
   * twice: GETs, and POSTs that carry an Idempotency-Key.
   */
  idempotent: boolean;
  /** statuses answered with a body instead of an error (`/readyz` answers 503 with its checks) */
  acceptStatuses?: readonly number[] | undefined;
}

/** Statuses that say "not now, try again": rate limited, or temporarily unavailable. */
const RETRY_STATUSES = new Set([429, 503]);
const BASE_BACKOFF_MS = 250;

/** `retry-after` as milliseconds: delta-seconds (decimals tolerated) or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Full-jitter exponential backoff between BASE_BACKOFF_MS·2^attempt / 2 and the same. */
function backoffMs(attempt: number, capMs: number): number {
  const ceiling = Math.min(capMs, BASE_BACKOFF_MS * 2 ** attempt);
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted(signal.reason));
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted(signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const aborted = (cause: unknown) =>
  new CompactdError({ status: 0, code: 'ABORTED', title: 'Aborted', detail: 'the request was aborted by the caller', cause });

export function buildUrl(baseUrl: string, path: string, query: RequestSpec['query']): string {
  const url = new URL(baseUrl.replace(/\/+$/, '') + path);
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url.toString();
}

export interface Attempt {
  response: Response;
  /** stops the timeout clock but keeps the caller's signal linked (streams read after this) */
  stopClock(): void;
  /** stops the clock and unlinks the caller's signal (once the body is read) */
  settle(): void;
}

async function fetchOnce(http: HttpSettings, spec: RequestSpec): Promise<Attempt> {
  const controller = new AbortController();
  let timedOut = false;
  const timeoutMs = http.timeoutMs + (spec.extraTimeoutMs ?? 0);
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onCallerAbort = () => controller.abort(spec.signal?.reason);
  spec.signal?.addEventListener('abort', onCallerAbort, { once: true });
  const settle = () => {
    clearTimeout(timer);
    spec.signal?.removeEventListener('abort', onCallerAbort);
  };
  const headers: Record<string, string> = { accept: 'application/json, application/problem+json', ...http.headers };
  if (http.apiKey !== undefined) headers['authorization'] = `Bearer ${http.apiKey}`;
  if (spec.body !== undefined) headers['content-type'] = 'application/json';
  for (const [name, value] of Object.entries(spec.headers ?? {})) if (value !== undefined) headers[name] = value;
  try {
    if (spec.signal?.aborted) throw aborted(spec.signal.reason);
    const response = await http.fetch(buildUrl(http.baseUrl, spec.path, spec.query), {
      method: spec.method,
      headers,
      ...(spec.body === undefined ? {} : { body: JSON.stringify(spec.body) }),
      signal: controller.signal,
    });
    return { response, stopClock: () => clearTimeout(timer), settle };
  } catch (error) {
    settle();
    if (error instanceof CompactdError) throw error;
    if (spec.signal?.aborted) throw aborted(spec.signal.reason);
    if (timedOut)
      throw new CompactdError({
        status: 0,
        code: 'TIMEOUT',
        title: 'Timeout',
        detail: `no answer from ${http.baseUrl} within ${timeoutMs} ms`,
        cause: error,
      });
    const reason = (error as { cause?: { code?: string; message?: string } }).cause;
    const detail = `${spec.method} ${http.baseUrl}${spec.path} failed: ${reason?.code ?? reason?.message ?? (error as Error).message}`;
    throw new CompactdError({ status: 0, code: 'CONNECTION_FAILED', title: 'Connection failed', detail, cause: error });
  }
}

/**
 * Sends a request, retrying 429/503 (waiting what `retry-after` asks, else a jittered
 * backoff) and, for idempotent requests, connection failures. Returns a successful
 * response whose body is unread, and the function that stops its timeout clock.
 */
export async function send(http: HttpSettings, spec: RequestSpec): Promise<Attempt> {
  for (let attempt = 0; ; attempt += 1) {
    let current: Attempt;
    try {
      current = await fetchOnce(http, spec);
    } catch (error) {
      const retryable = error instanceof CompactdError && error.code === 'CONNECTION_FAILED' && spec.idempotent;
      if (!retryable || attempt >= http.retries) throw error;
      await sleep(backoffMs(attempt, http.maxRetryDelayMs), spec.signal);
      continue;
    }
    const { response } = current;
    if (response.ok || spec.acceptStatuses?.includes(response.status)) return current;
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
    const bodyText = await response.text().catch(() => '');
    current.settle();
    const error = errorFromResponse(response.status, response.statusText, bodyText, {
      retryAfterMs,
      requestId: response.headers.get('x-request-id') ?? undefined,
    });
    const delay = retryAfterMs ?? backoffMs(attempt, http.maxRetryDelayMs);
    if (!RETRY_STATUSES.has(response.status) || attempt >= http.retries || delay > http.maxRetryDelayMs) throw error;
    await sleep(delay, spec.signal);
  }
}

/** Sends a request whose success has no body (204). */
export async function requestEmpty(http: HttpSettings, spec: RequestSpec): Promise<void> {
  const { response, settle } = await send(http, spec);
  try {
    await response.arrayBuffer();
  } finally {
    settle();
  }
}

/** Sends a request and parses its JSON answer. */
export async function requestJson<T>(http: HttpSettings, spec: RequestSpec): Promise<{ status: number; body: T; headers: Headers }> {
  const { response, settle } = await send(http, spec);
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw new CompactdError({
      status: response.status,
      code: 'CONNECTION_FAILED',
      title: 'Connection failed',
      detail: 'the answer was cut off',
      cause: error,
    });
  } finally {
    settle();
  }
  try {
    return { status: response.status, body: JSON.parse(text) as T, headers: response.headers };
  } catch (error) {
    throw new CompactdError({
      status: response.status,
      code: 'INVALID_RESPONSE',
      title: 'Invalid response',
      detail: `expected JSON, got: ${text.slice(0, 200)}`,
      cause: error,
    });
  }
}
