import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';

import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { TEST_REDIS_URL } from '../../../harness/service-urls.js';
import { waitFor } from '../../../harness/wait-for.js';
import { LlmError } from '../../../src/llm/port.js';
import { createProviderLimiter } from '../../../src/llm/rate-limit.js';

/**
 * The provider limiter is shared by worker processes through Redis: two real processes
 * hold its cap together, and a killed process's slot comes back when its lease expires.
 */

const CHILD = fileURLToPath(new URL('./limiter-child.ts', import.meta.url));
let redis: Redis;
let prefix: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
});
afterAll(() => {
  redis.disconnect();
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
});

function newPrefix(): string {
  prefix = `test-limiter-${randomUUID()}`;
  return prefix;
}

/** Starts a child and resolves once it printed `line`. */
function spawnChild(args: string[], line: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, TEST_REDIS_URL, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(`${line}\n`)) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`limiter child exited (${code}) before printing "${line}"`)));
  });
}

function printed(child: ChildProcess, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(`${line}\n`)) resolve();
    });
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`limiter child exited with ${code}`))));
  });
}

describe('provider limiter across processes', () => {
  it('holds the concurrency cap over two worker processes', async () => {
    const keyPrefix = newPrefix();
    const args = [keyPrefix, 'work', '3', '5000', '8', '60'];
    const [a, b] = await Promise.all([spawnChild(args, 'ready'), spawnChild(args, 'ready')]);
    const finished = [printed(a, 'done'), printed(b, 'done')];
    a.stdin?.write('go\n');
    b.stdin?.write('go\n');
    await Promise.all(finished);

    const observed = (await redis.lrange(`${keyPrefix}:observed`, 0, -1)).map((entry) => entry.split(':'));
    const counts = observed.map(([, active]) => Number(active));
    expect(observed).toHaveLength(16);
    // Each process alone wants 8 slots: a per-process limiter would let 6 run at once.
    expect(Math.max(...counts)).toBe(3);
    expect(new Set(observed.map(([pid]) => pid)).size).toBe(2);
    const limiter = createProviderLimiter(redis, { keyPrefix, concurrency: 3, requestsPerMinute: 1_000 });
    expect(await limiter.activeLeases('anthropic')).toBe(0);
  });

  it('frees the slot of a process killed with SIGKILL once its lease expires', async () => {
    const keyPrefix = newPrefix();
    const leaseTtlMs = 1_000;
    const holder = await spawnChild([keyPrefix, 'hold', '1', String(leaseTtlMs)], 'acquired');
    const limiter = createProviderLimiter(redis, { keyPrefix, concurrency: 1, requestsPerMinute: 1_000_000, leaseTtlMs, maxPollMs: 10 });
    const leasesKey = `${keyPrefix}:{llm:anthropic}:leases`;
    const [, firstExpiry] = await redis.zrange(leasesKey, '0', '0', 'WITHSCORES');

    let acquiredAt: number | undefined;
    const waiting = limiter.run('anthropic', async () => {
      acquiredAt = performance.now();
    });
    // The live holder renews its lease past the first expiry, and the waiter stays blocked.
    await waitFor(
      async () => Number((await redis.zrange(leasesKey, '0', '0', 'WITHSCORES'))[1]) > Number(firstExpiry) + leaseTtlMs / 2,
      5_000,
      25,
      'a renewal',
    );
    expect(acquiredAt).toBeUndefined();

    const killedAt = performance.now();
    holder.kill('SIGKILL');
    await waiting;
    const freedAfterMs = (acquiredAt ?? 0) - killedAt;
    expect(freedAfterMs).toBeGreaterThan(leaseTtlMs / 3);
    expect(freedAfterMs).toBeLessThan(leaseTtlMs + 600);
  });
});

describe('provider limiter rate', () => {
  it('spaces requests at requestsPerMinute once the burst is spent', async () => {
    const keyPrefix = newPrefix();
    const limiter = createProviderLimiter(redis, { keyPrefix, concurrency: 100, requestsPerMinute: 600, burst: 2, maxPollMs: 10 });
    const startedAt = performance.now();
    const starts: number[] = [];
    await Promise.all(Array.from({ length: 6 }, () => limiter.run('openai', async () => void starts.push(performance.now() - startedAt))));
    starts.sort((x, y) => x - y);
    // 2 at once from the burst, then one every 100 ms (600/min).
    expect(starts[1]).toBeLessThan(150);
    expect(starts[5]).toBeGreaterThanOrEqual(380);
    expect(starts[5]).toBeLessThan(1_000);
  });

  it('stops waiting with cancelled when the signal aborts', async () => {
    const keyPrefix = newPrefix();
    const limiter = createProviderLimiter(redis, { keyPrefix, concurrency: 1, requestsPerMinute: 1_000_000 });
    let release!: () => void;
    const holding = limiter.run('openai', () => new Promise<void>((resolve) => (release = resolve)));
    await waitFor(async () => (await limiter.activeLeases('openai')) === 1, 2_000);
    const controller = new AbortController();
    const waiting = limiter.run('openai', async () => 'ran', controller.signal).catch((error: unknown) => error);
    controller.abort();
    expect(await waiting).toMatchObject({ kind: 'cancelled' });
    release();
    await holding;
    expect(await limiter.activeLeases('openai')).toBe(0);
  });
});

describe('a provider that answers 429 with a retry-after', () => {
  it('is paused for that long: beyond what calls wait out, they fail fast with the rest of the wait; another provider is untouched', async () => {
    const limiter = createProviderLimiter(redis, {
      keyPrefix: newPrefix(),
      concurrency: 4,
      requestsPerMinute: 6_000,
      maxPauseWaitMs: 1_000,
    });
    const limited = new LlmError('rate_limit', '429', { retryAfterMs: 5_000, provider: 'anthropic' });
    await expect(limiter.run('anthropic', async () => Promise.reject(limited))).rejects.toBe(limited);

    let called = false;
    const paused = await limiter
      .run('anthropic', async () => {
        called = true;
      })
      .catch((error: unknown) => error);
    expect(called).toBe(false);
    expect(paused).toBeInstanceOf(LlmError);
    expect((paused as LlmError).kind).toBe('rate_limit');
    expect((paused as LlmError).retryAfterMs).toBeGreaterThan(4_000);
    expect((paused as LlmError).retryAfterMs).toBeLessThanOrEqual(5_000);

    await expect(limiter.run('openai', async () => 'served')).resolves.toBe('served');
  });

  it('has a short pause waited out before the call', async () => {
    const limiter = createProviderLimiter(redis, {
      keyPrefix: newPrefix(),
      concurrency: 4,
      requestsPerMinute: 6_000,
      maxPauseWaitMs: 1_000,
    });
    const limited = new LlmError('rate_limit', '429', { retryAfterMs: 400, provider: 'anthropic' });
    await expect(limiter.run('anthropic', async () => Promise.reject(limited))).rejects.toBe(limited);
    const started = Date.now();
    await expect(limiter.run('anthropic', async () => Date.now())).resolves.toBeGreaterThanOrEqual(started + 300);
  });

  it('is not paused by an error without a retry-after', async () => {
    const limiter = createProviderLimiter(redis, { keyPrefix: newPrefix(), concurrency: 4, requestsPerMinute: 6_000 });
    await expect(limiter.run('anthropic', async () => Promise.reject(new LlmError('server', '500')))).rejects.toBeInstanceOf(LlmError);
    await expect(limiter.run('anthropic', async () => 'served')).resolves.toBe('served');
  });
});
