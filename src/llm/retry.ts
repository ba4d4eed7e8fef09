import { isLlmError, LlmError } from './port.js';

/**
 * The one retry layer for LLM calls. The SDKs are built with `maxRetries: 0`, so a call
 * is attempted at most `maxAttempts` times in total, here. The policy is pure (attempt,
 * error, random → delay); `withRetry` is the loop around it.
 */

export interface RetryPolicy {
  /** first backoff step; doubles per attempt */
  baseDelayMs: number;
  /** cap of the exponential backoff */
  maxDelayMs: number;
  /**
   * A provider asking us to wait longer than this is not retried in-process: the error
   * goes up (retryable, with its `retryAfterMs`) so the queue can park the job instead of
   * holding a worker slot.
   */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { baseDelayMs: 500, maxDelayMs: 20_000, maxRetryAfterMs: 60_000 };

/** Whether another attempt of the same request may succeed. Unknown errors are final. */
export function isRetryable(error: unknown, policy: RetryPolicy = DEFAULT_RETRY_POLICY): boolean {
  if (!isLlmError(error) || !error.retryable) return false;
  return error.retryAfterMs === undefined || error.retryAfterMs <= policy.maxRetryAfterMs;
}

/**
 * Delay before attempt `attempt + 1`, after attempt `attempt` (1-based) failed with `error`.
 * A provider's retry-after wins, plus a little jitter upwards (never earlier than asked) so
 * workers told the same instant do not return together. Otherwise "equal jitter"
 * exponential backoff: half the step fixed, half random.
 */
export function retryDelayMs(attempt: number, error: unknown, rand: () => number, policy: RetryPolicy = DEFAULT_RETRY_POLICY): number {
  const retryAfterMs = isLlmError(error) ? error.retryAfterMs : undefined;
  if (retryAfterMs !== undefined) {
    const spread = Math.min(1_000, retryAfterMs * 0.1);
    return Math.round(retryAfterMs + rand() * spread);
  }
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(step / 2 + (rand() * step) / 2);
}

export interface WithRetryOptions {
  /** total attempts, including the first (≥ 1) */
  maxAttempts: number;
  signal?: AbortSignal | undefined;
  policy?: RetryPolicy;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  /** observes each failed attempt that will be retried (logging, metrics) */
  onRetry?: (info: { attempt: number; delayMs: number; error: unknown }) => void;
}

/**
 * Runs `fn(attempt)` until it succeeds, fails with a final error, or `maxAttempts` is
 * reached; the last error is rethrown unchanged. Aborting `signal` ends the wait at once
 * with a `cancelled` LlmError.
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, options: WithRetryOptions): Promise<T> {
  const policy = options.policy ?? DEFAULT_RETRY_POLICY;
  const sleep = options.sleep ?? abortableSleep;
  const random = options.random ?? Math.random;
  const maxAttempts = Math.max(1, Math.floor(options.maxAttempts));
  for (let attempt = 1; ; attempt += 1) {
    throwIfAborted(options.signal);
    try {
      return await fn(attempt);
    } catch (error) {
      // A caller who cancelled hears "cancelled", whatever the attempt died of meanwhile.
      if (options.signal?.aborted === true && !(isLlmError(error) && error.kind === 'cancelled')) throwIfAborted(options.signal);
      if (attempt >= maxAttempts || !isRetryable(error, policy)) throw error;
      const delayMs = retryDelayMs(attempt, error, random, policy);
      options.onRetry?.({ attempt, delayMs, error });
      await sleep(delayMs, options.signal);
    }
  }
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) {
    throw new LlmError('cancelled', 'the LLM call was cancelled', { cause: signal.reason });
  }
}

/** setTimeout that rejects with a `cancelled` LlmError when the signal fires. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(new LlmError('cancelled', 'the LLM call was cancelled', { cause: signal.reason }));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new LlmError('cancelled', 'the LLM call was cancelled', { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
