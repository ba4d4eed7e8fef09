import { LlmError, type ProviderName } from './port.js';

/**
 * Maps what a provider said (HTTP status, error type/code, headers) to an LlmError. Both
 * SDKs expose the same facts on their APIError, so the adapters share this table.
 */

export interface HttpFailure {
  provider: ProviderName;
  status: number;
  headers: Headers | undefined;
  /** error.type of the body (anthropic: overloaded_error…; openai: insufficient_quota…) */
  type: string | null | undefined;
  /** error.code of the body (openai: rate_limit_exceeded, insufficient_quota, context_length_exceeded…) */
  code: string | null | undefined;
  message: string;
  cause: unknown;
}

/**
 * Reads `retry-after-ms` (a float, OpenAI and Anthropic gateways) or `retry-after`
 * (seconds or an HTTP date, RFC 9110 §10.2.3). Unparseable or negative values are ignored.
 */
export function parseRetryAfterMs(headers: Headers | undefined, nowMs: number = Date.now()): number | undefined {
  if (headers === undefined) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return Math.ceil(value);
  }
  const after = headers.get('retry-after');
  if (after === null || after.trim() === '') return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.ceil(seconds * 1000) : undefined;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

const QUOTA_MARKERS = /insufficient_quota|billing/i;
const CONTEXT_MARKERS = /context_length_exceeded|prompt is too long|maximum context length|context window/i;

/** One row per status family; see STYLE §4 for what each kind means to the worker. */
export function llmErrorFromHttp(failure: HttpFailure): LlmError {
  const { provider, status, type, code, cause } = failure;
  const base = { provider, providerStatus: status, cause };
  const message = `${provider} answered ${status}: ${failure.message}`;
  const retryAfterMs = parseRetryAfterMs(failure.headers);
  const withRetryAfter = retryAfterMs === undefined ? base : { ...base, retryAfterMs };
  const marker = `${type ?? ''} ${code ?? ''}`;

  // Anthropic reports an empty balance as a 400 whose message names it; OpenAI as a 429
  // with type/code insufficient_quota. Neither clears by waiting.
  if (status === 402 || QUOTA_MARKERS.test(marker) || /credit balance/i.test(failure.message)) {
    return new LlmError('quota', message, base);
  }
  if (type === 'overloaded_error' || status === 529 || status === 503) {
    return new LlmError('overloaded', message, withRetryAfter);
  }
  if (status === 429) return new LlmError('rate_limit', message, withRetryAfter);
  if (status === 408) return new LlmError('timeout', message, withRetryAfter);
  // 409: Anthropic and OpenAI both document it as a transient lock conflict worth retrying.
  if (status === 409 || status >= 500) return new LlmError('server', message, withRetryAfter);
  if (status === 401 || status === 403) return new LlmError('auth', message, base);
  if (CONTEXT_MARKERS.test(`${marker} ${failure.message}`)) {
    return new LlmError('bad_request', message, { ...base, code: 'LLM_CONTEXT_TOO_LONG' });
  }
  return new LlmError('bad_request', message, base);
}

/** A response body that was not the JSON the SDK expected (cut connection, proxy page). */
export function malformedResponse(provider: ProviderName, cause: unknown): LlmError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new LlmError('invalid_output', `${provider} returned a malformed response: ${detail}`, {
    provider,
    retryable: true,
    cause,
  });
}

/** Anything an adapter did not recognise: kept as the cause, never retried blindly. */
export function unexpectedError(provider: ProviderName, cause: unknown): LlmError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new LlmError('server', `${provider} call failed: ${detail}`, { provider, retryable: false, cause });
}

type ErrorClass<T = Error> = abstract new (...args: never[]) => T;

/** The SDK error classes both official SDKs define (same names, separate classes). */
export interface SdkErrorClasses<ApiError extends Error & { status: number | undefined; headers: Headers | undefined }> {
  userAbort: ErrorClass;
  connectionTimeout: ErrorClass;
  connection: ErrorClass;
  api: ErrorClass<ApiError>;
}

/**
 * One mapping from whatever an SDK call threw to an LlmError: cancelled (our abort), timeout,
 * connection failure, an HTTP answer (through the status table above), a malformed body, or
 * anything else. `describeApiError` reads the body's type/code/message, which the SDKs keep in
 * different places.
 */
export function sdkCallError<ApiError extends Error & { status: number | undefined; headers: Headers | undefined }>(
  provider: ProviderName,
  error: unknown,
  signal: AbortSignal | undefined,
  classes: SdkErrorClasses<ApiError>,
  describeApiError: (error: ApiError) => Pick<HttpFailure, 'type' | 'code' | 'message'>,
): LlmError {
  if (error instanceof LlmError) return error;
  if (error instanceof classes.userAbort || signal?.aborted === true) {
    return new LlmError('cancelled', `${provider} call was cancelled`, { provider, cause: error });
  }
  if (error instanceof classes.connectionTimeout) return new LlmError('timeout', `${provider} call timed out`, { provider, cause: error });
  if (error instanceof classes.connection) {
    return new LlmError('server', `${provider} connection failed: ${error.message}`, { provider, cause: error });
  }
  if (error instanceof classes.api && typeof error.status === 'number') {
    return llmErrorFromHttp({ provider, status: error.status, headers: error.headers, ...describeApiError(error), cause: error });
  }
  if (error instanceof SyntaxError) return malformedResponse(provider, error);
  return unexpectedError(provider, error);
}
