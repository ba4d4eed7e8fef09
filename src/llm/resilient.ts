import type { Summarizer, SummarizeResult } from './port.js';
import type { ProviderLimiter } from './rate-limit.js';
import { type RetryPolicy, withRetry } from './retry.js';

/**
 * Wraps an adapter with the one retry layer and the shared provider limiter. Each attempt
 * takes its own limiter slot, so a call waiting out a backoff holds no slot.
 */

export interface ResilienceOptions {
  maxAttempts: number;
  /** per-attempt timeout when a call does not give one */
  timeoutMs: number;
  limiter?: ProviderLimiter | undefined;
  policy?: RetryPolicy | undefined;
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  random?: (() => number) | undefined;
  onRetry?: ((info: { provider: string; attempt: number; delayMs: number; error: unknown }) => void) | undefined;
}

export function withResilience(inner: Summarizer, options: ResilienceOptions): Summarizer {
  return {
    provider: inner.provider,
    async summarize(request, callOptions): Promise<SummarizeResult> {
      const attemptOptions = { ...callOptions, timeoutMs: callOptions.timeoutMs ?? options.timeoutMs };
      const send = (): Promise<SummarizeResult> => {
        callOptions.onAttempt?.('start');
        return inner.summarize(request, attemptOptions).finally(() => callOptions.onAttempt?.('end'));
      };
      const attempt = (): Promise<SummarizeResult> =>
        options.limiter === undefined ? send() : options.limiter.run(inner.provider, send, callOptions.signal);
      return withRetry(attempt, {
        maxAttempts: options.maxAttempts,
        signal: callOptions.signal,
        ...(options.policy === undefined ? {} : { policy: options.policy }),
        ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
        ...(options.random === undefined ? {} : { random: options.random }),
        onRetry: (info) => options.onRetry?.({ provider: inner.provider, ...info }),
      });
    },
  };
}
