import { createHash, randomUUID } from 'node:crypto';

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TEST_REDIS_URL } from '../../../harness/service-urls.js';
import { runScript } from '../../../src/queue/redis-script.js';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL);
});
afterAll(() => {
  redis.disconnect();
});

describe('runScript', () => {
  it('sends a script the server does not know once, then runs it by its SHA', async () => {
    // a script text no server has seen: the first call meets NOSCRIPT and sends it whole
    const script = `-- ${randomUUID()}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`;
    const sha = createHash('sha1').update(script).digest('hex');
    const key = `test:run-script:${randomUUID()}`;
    expect(await redis.script('EXISTS', sha)).toEqual([0]);
    expect(await runScript(redis, script, 1, key, 2)).toBe(2);
    expect(await redis.script('EXISTS', sha)).toEqual([1]);
    expect(await runScript(redis, script, 1, key, 3)).toBe(5);
    await redis.del(key);
  });

  it('passes a script error through', async () => {
    await expect(runScript(redis, `-- ${randomUUID()}\nreturn redis.error_reply('BROKEN on purpose')`, 0)).rejects.toThrow(
      'BROKEN on purpose',
    );
  });
});
