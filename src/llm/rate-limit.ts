import { randomUUID } from 'node:crypto';

import type { Cluster, Redis } from 'ioredis';

import { runScript } from '../queue/redis-script.js';
import { isLlmError, LlmError, type ProviderName } from './port.js';
import { abortableSleep } from './retry.js';

/**
 * A provider-wide concurrency cap and request rate shared by every worker process through
 * Redis, so twenty workers do not stampede a provider (SPEC §5.4).
 *
 * Concurrency: a sorted set of leases scored by their expiry. A holder renews its lease
 * while its call runs; a process that dies stops renewing, and its lease expires after
 * `leaseTtlMs` — no slot leaks after kill -9. Rate: a token bucket refilled continuously
 * at `requestsPerMinute` with room for a `burst`, the way provider limits themselves work.
 * Both live in one Lua script, so the check and the take are atomic, on Redis's clock.
 *
 * Back-off: when a provider answers 429/529 with a retry-after, the provider is paused for
 * that long (a key with that TTL), so no process keeps knocking on a provider that said
 * "later". A short pause is waited out like a busy slot; during a long one calls fail fast
 * with the rest of the wait as their retry-after, and the queue defers just those steps.
 * Other providers' calls are not touched.
 */

export interface ProviderLimiterOptions {
  /** e.g. the queue prefix; keys are `${keyPrefix}:{llm:${provider}}:…` (one Cluster slot per provider) */
  keyPrefix: string;
  /** calls in flight per provider across all processes */
  concurrency: number;
  requestsPerMinute: number;
  /** bucket size; default 1/6 of a minute's budget (at least 1) */
  burst?: number;
  /** a dead process's slot is free again after this long; default 30 s */
  leaseTtlMs?: number;
  /** upper bound of one wait between attempts to take a slot; default 100 ms */
  maxPollMs?: number;
  /**
   * A pause up to this long is waited out here, like a busy slot; a longer one fails the call
   * at once (a retryable `rate_limit` carrying the rest of the wait) so the queue can defer the
   * step. Default 60 s, the retry layer's own patience (DEFAULT_RETRY_POLICY.maxRetryAfterMs).
   */
  maxPauseWaitMs?: number;
}

export interface ProviderLimiter {
  /** Runs `fn` once a slot and a request token are free; waits otherwise. Aborting the signal ends the wait. */
  run<T>(provider: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** leases currently held (expired ones excluded), for metrics and tests */
  activeLeases(provider: string): Promise<number>;
}

// Returns {1, 0} when the lease was taken, {2, pausedMs} while the provider is paused, {0, waitMs} otherwise.
const ACQUIRE = `
local paused = redis.call('PTTL', KEYS[3])
if paused > 0 then
  return {2, paused}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local concurrency = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local rate = tonumber(ARGV[4])
local burst = tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= concurrency then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, math.max(1, tonumber(first[2]) - now)}
end
local bucket = redis.call('HMGET', KEYS[2], 'tokens', 'ts')
local tokens = tonumber(bucket[1]) or burst
local ts = tonumber(bucket[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate)
if tokens < 1 then
  return {0, math.max(1, math.ceil((1 - tokens) / rate))}
end
redis.call('HSET', KEYS[2], 'tokens', tostring(tokens - 1), 'ts', now)
redis.call('PEXPIRE', KEYS[2], math.ceil(burst / rate) + 60000)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl * 2)
return {1, 0}
`;

// Extends a live lease; a lease that already expired is not resurrected (its slot may be taken).
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
local renewed = redis.call('ZADD', KEYS[1], 'XX', 'CH', now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl * 2)
return renewed
`;

// Pauses the provider for ARGV[1] ms unless it is already paused for longer.
const PAUSE = `
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return 0
`;

const COUNT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
`;

export function createProviderLimiter(redis: Redis | Cluster, options: ProviderLimiterOptions): ProviderLimiter {
  const leaseTtlMs = options.leaseTtlMs ?? 30_000;
  const maxPollMs = options.maxPollMs ?? 100;
  const maxPauseWaitMs = options.maxPauseWaitMs ?? 60_000;
  const ratePerMs = options.requestsPerMinute / 60_000;
  const burst = options.burst ?? Math.max(1, Math.ceil(options.requestsPerMinute / 6));
  const keys = (provider: string): [string, string, string] => [
    `${options.keyPrefix}:{llm:${provider}}:leases`,
    `${options.keyPrefix}:{llm:${provider}}:bucket`,
    `${options.keyPrefix}:{llm:${provider}}:paused`,
  ];

  async function acquire(provider: string, leaseId: string, signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      if (signal?.aborted === true) throw new LlmError('cancelled', 'cancelled while waiting for an LLM slot', { cause: signal.reason });
      const [leasesKey, bucketKey, pausedKey] = keys(provider);
      const reply = (await runScript(
        redis,
        ACQUIRE,
        3,
        leasesKey,
        bucketKey,
        pausedKey,
        leaseId,
        options.concurrency,
        leaseTtlMs,
        ratePerMs,
        burst,
      )) as [number, number];
      if (reply[0] === 1) return;
      if (reply[0] === 2) {
        if (reply[1] > maxPauseWaitMs) {
          throw new LlmError('rate_limit', `${provider} asked to back off; ${reply[1]} ms left`, {
            retryAfterMs: reply[1],
            provider: provider as ProviderName,
          });
        }
        // Waiting processes must not all return at the same instant: a little jitter upwards.
        await abortableSleep(reply[1] + Math.round(Math.random() * Math.min(1_000, reply[1] * 0.1)), signal);
        continue;
      }
      // Releases are not announced, so poll; jitter keeps waiting processes from moving in lockstep.
      const waitMs = Math.min(reply[1], maxPollMs);
      await abortableSleep(Math.max(1, Math.round(waitMs * (0.5 + Math.random() * 0.5))), signal);
    }
  }

  return {
    async run(provider, fn, signal) {
      const leaseId = randomUUID();
      const [leasesKey] = keys(provider);
      await acquire(provider, leaseId, signal);
      const renewal = setInterval(
        () => {
          runScript(redis, RENEW, 1, leasesKey, leaseId, leaseTtlMs).catch(() => {
            // A failed renewal only shortens the lease; the call itself is unaffected.
          });
        },
        Math.max(50, Math.floor(leaseTtlMs / 3)),
      );
      renewal.unref();
      try {
        return await fn();
      } catch (error) {
        if (
          isLlmError(error) &&
          (error.kind === 'rate_limit' || error.kind === 'overloaded') &&
          error.retryAfterMs !== undefined &&
          error.retryAfterMs > 0
        ) {
          await runScript(redis, PAUSE, 1, keys(provider)[2], Math.ceil(error.retryAfterMs)).catch(() => {
            // Unreachable Redis: the other calls find out from the provider themselves.
          });
        }
        throw error;
      } finally {
        clearInterval(renewal);
        await redis.zrem(leasesKey, leaseId).catch(() => {
          // Unreachable Redis: the lease expires on its own after leaseTtlMs.
        });
      }
    },
    async activeLeases(provider) {
      const [leasesKey] = keys(provider);
      return Number(await runScript(redis, COUNT, 1, leasesKey));
    },
  };
}
