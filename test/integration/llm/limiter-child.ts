import { createInterface } from 'node:readline';

import { Redis } from 'ioredis';

import { createProviderLimiter } from '../../../src/llm/rate-limit.js';

/**
 * A worker process for the limiter tests. Args: redisUrl keyPrefix mode concurrency leaseTtlMs [tasks holdMs].
 *   hold: take one slot and keep it until killed (prints "acquired").
 *   work: after "go" on stdin, run `tasks` calls at once; each call counts itself in
 *         `${keyPrefix}:active` for `holdMs` and records the count it saw (prints "done").
 */
const [redisUrl = '', keyPrefix = '', mode = '', concurrency = '1', leaseTtlMs = '30000', tasks = '1', holdMs = '50'] =
  process.argv.slice(2);
const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
const limiter = createProviderLimiter(redis, {
  keyPrefix,
  concurrency: Number(concurrency),
  requestsPerMinute: 1_000_000,
  leaseTtlMs: Number(leaseTtlMs),
  maxPollMs: 10,
});

if (mode === 'hold') {
  await limiter.run('anthropic', async () => {
    process.stdout.write('acquired\n');
    await new Promise(() => {});
  });
} else {
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once('line', () => resolve()));
  await Promise.all(
    Array.from({ length: Number(tasks) }, () =>
      limiter.run('anthropic', async () => {
        const active = await redis.incr(`${keyPrefix}:active`);
        await redis.rpush(`${keyPrefix}:observed`, `${process.pid}:${active}`);
        await new Promise((resolve) => setTimeout(resolve, Number(holdMs)));
        await redis.decr(`${keyPrefix}:active`);
      }),
    ),
  );
  process.stdout.write('done\n');
  redis.disconnect();
}
