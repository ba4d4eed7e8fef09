import { describe, expect, it } from 'vitest';

import { createKeyCache } from '../../../src/api/key-cache.js';

describe('API key cache', () => {
  it('looks a key up once per TTL, and a revoked key stops working once its TTL has passed', async () => {
    let clock = 0;
    let revoked = false;
    let lookups = 0;
    const lookup = async () => {
      lookups += 1;
      return revoked ? null : 'tenant-a';
    };
    const cache = createKeyCache({ ttlMs: 5_000, now: () => clock });
    expect(await cache.tenantOf('cpd_key', lookup)).toBe('tenant-a');
    revoked = true;
    clock = 4_999;
    expect(await cache.tenantOf('cpd_key', lookup)).toBe('tenant-a');
    expect(lookups).toBe(1);
    clock = 5_000;
    expect(await cache.tenantOf('cpd_key', lookup)).toBeNull();
    expect(lookups).toBe(2);
  });

  it('makes the lookups of one key in flight at once one lookup, and never remembers an unknown key', async () => {
    let lookups = 0;
    let release: (tenant: string | null) => void = () => undefined;
    const lookup = () => {
      lookups += 1;
      return new Promise<string | null>((resolve) => (release = resolve));
    };
    const cache = createKeyCache();
    const burst = Array.from({ length: 2_000 }, () => cache.tenantOf('cpd_burst', lookup));
    release('tenant-b');
    expect(new Set(await Promise.all(burst))).toEqual(new Set(['tenant-b']));
    expect(lookups).toBe(1);
    let unknownLookups = 0;
    for (let i = 0; i < 3; i += 1) await cache.tenantOf('cpd_unknown', async () => ((unknownLookups += 1), null));
    expect(unknownLookups).toBe(3);
  });

  it('holds at most maxKeys keys, the oldest going first', async () => {
    let lookups = 0;
    const cache = createKeyCache({ maxKeys: 2 });
    const lookup = async (key: string) => ((lookups += 1), `tenant-of-${key}`);
    for (const key of ['k1', 'k2', 'k3', 'k1']) await cache.tenantOf(key, lookup);
    expect(lookups).toBe(4);
  });
});
