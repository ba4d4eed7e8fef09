import { describe, expect, it } from 'vitest';

import { LlmError } from '../../../src/llm/port.js';
import { DEFAULT_RETRY_POLICY, isRetryable, retryDelayMs, withRetry } from '../../../src/llm/retry.js';

const policy = { baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 10_000 };

describe('isRetryable', () => {
  it.each([
    ['rate_limit', true],
    ['overloaded', true],
    ['server', true],
    ['timeout', true],
    ['auth', false],
    ['bad_request', false],
    ['quota', false],
    ['cancelled', false],
    ['invalid_output', false],
  ] as const)('%s → %s by default', (kind, expected) => {
    expect(isRetryable(new LlmError(kind, 'x'))).toBe(expected);
  });

  it('follows an explicit retryable flag and leaves unknown errors final', () => {
    expect(isRetryable(new LlmError('invalid_output', 'empty', { retryable: true }))).toBe(true);
    expect(isRetryable(new Error('boom'))).toBe(false);
  });

  it('leaves a retry-after beyond maxRetryAfterMs to the queue', () => {
    expect(isRetryable(new LlmError('rate_limit', 'x', { retryAfterMs: 10_000 }), policy)).toBe(true);
    expect(isRetryable(new LlmError('rate_limit', 'x', { retryAfterMs: 10_001 }), policy)).toBe(false);
  });
});

describe('retryDelayMs', () => {
  const error = new LlmError('server', 'x');

  it('backs off exponentially with equal jitter, capped', () => {
    expect([1, 2, 3, 4, 5].map((attempt) => retryDelayMs(attempt, error, () => 0, policy))).toEqual([50, 100, 200, 400, 500]);
    expect([1, 2, 3, 4, 5].map((attempt) => retryDelayMs(attempt, error, () => 1, policy))).toEqual([100, 200, 400, 800, 1_000]);
  });

  it('waits at least what retry-after asks, with at most 10% (≤ 1 s) added', () => {
    const limited = new LlmError('rate_limit', 'x', { retryAfterMs: 2_000 });
    expect(retryDelayMs(1, limited, () => 0, policy)).toBe(2_000);
    expect(retryDelayMs(1, limited, () => 1, policy)).toBe(2_200);
    expect(retryDelayMs(1, new LlmError('rate_limit', 'x', { retryAfterMs: 30_000 }), () => 1)).toBe(31_000);
  });

  it('has sane defaults', () => {
    expect(retryDelayMs(1, error, () => 0.5)).toBe(Math.round(DEFAULT_RETRY_POLICY.baseDelayMs * 0.75));
  });
});

describe('withRetry', () => {
  const noSleep = { sleep: async () => undefined, random: () => 0, policy };

  it('retries retryable failures up to maxAttempts and rethrows the last error', async () => {
    const attempts: number[] = [];
    const last = new LlmError('overloaded', 'third');
    const run = withRetry(
      async (attempt) => {
        attempts.push(attempt);
        throw attempt === 3 ? last : new LlmError('server', 'again');
      },
      { maxAttempts: 3, ...noSleep },
    );
    await expect(run).rejects.toBe(last);
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('stops at the first final error', async () => {
    let calls = 0;
    await expect(
      withRetry(
        async () => {
          calls += 1;
          throw new LlmError('auth', 'no');
        },
        { maxAttempts: 5, ...noSleep },
      ),
    ).rejects.toMatchObject({ kind: 'auth' });
    expect(calls).toBe(1);
  });

  it('sleeps the policy delay between attempts and reports each retry', async () => {
    const slept: number[] = [];
    const retries: number[] = [];
    const result = await withRetry(
      async (attempt) => {
        if (attempt < 3) throw new LlmError('rate_limit', 'x', { retryAfterMs: 700 });
        return 'ok';
      },
      {
        maxAttempts: 4,
        policy,
        random: () => 0,
        sleep: async (ms) => void slept.push(ms),
        onRetry: (info) => void retries.push(info.attempt),
      },
    );
    expect(result).toBe('ok');
    expect(slept).toEqual([700, 700]);
    expect(retries).toEqual([1, 2]);
  });

  it('ends a backoff wait at once when the signal aborts', async () => {
    const controller = new AbortController();
    let calls = 0;
    const startedAt = performance.now();
    const run = withRetry(
      async () => {
        calls += 1;
        throw new LlmError('server', 'x');
      },
      {
        maxAttempts: 3,
        signal: controller.signal,
        policy: { ...policy, baseDelayMs: 60_000, maxDelayMs: 60_000 },
        onRetry: () => controller.abort(),
      },
    );
    await expect(run).rejects.toMatchObject({ kind: 'cancelled' });
    expect(calls).toBe(1);
    expect(performance.now() - startedAt).toBeLessThan(1_000);
  });

  it('reports cancelled when the signal aborted while an attempt was failing', async () => {
    const controller = new AbortController();
    const run = withRetry(
      async () => {
        controller.abort();
        throw new LlmError('server', 'x');
      },
      { maxAttempts: 3, signal: controller.signal, ...noSleep },
    );
    await expect(run).rejects.toMatchObject({ kind: 'cancelled' });
  });
});
