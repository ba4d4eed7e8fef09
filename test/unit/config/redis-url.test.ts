import { describe, expect, it } from 'vitest';

import { ConfigError, loadConfig } from '../../../src/config/env.js';
import { parseRedisUrl } from '../../../src/config/redis-url.js';

describe('parseRedisUrl', () => {
  it('keeps a single-server URL as it is (ioredis reads it)', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379')).toEqual({ ok: true, target: { kind: 'single', url: 'redis://127.0.0.1:6379' } });
    expect(parseRedisUrl('rediss://:secret@cache.internal:6380/2')).toEqual({
      ok: true,
      target: { kind: 'single', url: 'rediss://:secret@cache.internal:6380/2' },
    });
  });

  it('reads a cluster URL: seed nodes, default port 6379, IPv6 in brackets', () => {
    expect(parseRedisUrl('redis+cluster://10.0.0.1:7000,10.0.0.2:7001, redis-3.internal ,[::1]:7002,[fd00::5]')).toEqual({
      ok: true,
      target: {
        kind: 'cluster',
        nodes: [
          { host: '10.0.0.1', port: 7000 },
          { host: '10.0.0.2', port: 7001 },
          { host: 'redis-3.internal', port: 6379 },
          { host: '::1', port: 7002 },
          { host: 'fd00::5', port: 6379 },
        ],
        username: undefined,
        password: undefined,
        tls: false,
      },
    });
  });

  it('reads credentials (percent-decoded) and TLS from rediss+cluster', () => {
    const parsed = parseRedisUrl('rediss+cluster://app:p%40ss%3Aword@a.example:6380,b.example:6380');
    expect(parsed).toEqual({
      ok: true,
      target: {
        kind: 'cluster',
        nodes: [
          { host: 'a.example', port: 6380 },
          { host: 'b.example', port: 6380 },
        ],
        username: 'app',
        password: 'p@ss:word',
        tls: true,
      },
    });
    expect(parseRedisUrl('redis+cluster://:only-password@a:1')).toMatchObject({
      target: { username: undefined, password: 'only-password' },
    });
  });

  it('accepts database 0 (the only one a cluster has) and a trailing slash', () => {
    expect(parseRedisUrl('redis+cluster://a:7000,b:7001/0')).toMatchObject({ ok: true, target: { nodes: [{ host: 'a' }, { host: 'b' }] } });
    expect(parseRedisUrl('redis+cluster://a:7000/')).toMatchObject({ ok: true });
  });

  it.each([
    ['no scheme', '127.0.0.1:6379'],
    ['another scheme', 'http://127.0.0.1:6379'],
    ['not a URL', 'not a url'],
    ['an empty node list', 'redis+cluster://'],
    ['an empty entry', 'redis+cluster://a:7000,,b:7001'],
    ['a port out of range', 'redis+cluster://a:70000'],
    ['port 0', 'redis+cluster://a:0'],
    ['a port that is not a number', 'redis+cluster://a:x'],
    ['a host with a space', 'redis+cluster://bad host:7000'],
    ['another database', 'redis+cluster://a:7000/3'],
    ['a query', 'redis+cluster://a:7000?tls=true'],
    ['bad percent-encoding', 'redis+cluster://user:%zz@a:7000'],
    ['an unclosed IPv6 bracket', 'redis+cluster://[::1:7000'],
  ])('refuses %s: %s', (_, text) => {
    const parsed = parseRedisUrl(text);
    expect(parsed.ok).toBe(false);
  });
});

describe('REDIS_URL', () => {
  it('takes a cluster URL', () => {
    expect(loadConfig({ REDIS_URL: 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001' }).redisUrl).toBe(
      'redis+cluster://127.0.0.1:7000,127.0.0.1:7001',
    );
  });

  it('names the variable and the bad node when a cluster URL is wrong', () => {
    try {
      loadConfig({ REDIS_URL: 'redis+cluster://127.0.0.1:7000,127.0.0.1:99999' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).issues).toEqual(['REDIS_URL: not a host:port in the cluster\'s node list: "127.0.0.1:99999"']);
    }
  });

  it('tells the accepted forms for anything else', () => {
    expect(() => loadConfig({ REDIS_URL: 'memcached://127.0.0.1' })).toThrow(
      /REDIS_URL: must be redis:\/\/host:port, rediss:\/\/host:port or redis\+cluster:\/\/host:port,host:port/,
    );
  });
});
