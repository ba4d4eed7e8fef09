import { createHash } from 'node:crypto';

/**
 * The tenants of recently seen API keys, so a request does not look its key up on the shared
 * pool every time: a burst of 2,000 long-polls arriving at once each sent its own lookup,
 * queued ahead of every other tenant's reads. A key is trusted for `ttlMs` after its lookup:
 * a revoked key stops working within that time (the revocation latency, 5 s by default). The
 * lookups of one key in flight at once are one lookup. Unknown keys are not remembered (a
 * stream of made-up keys cannot fill the cache); past `maxKeys` the oldest entry goes.
 */

export interface KeyCacheOptions {
  ttlMs?: number;
  maxKeys?: number;
  now?: () => number;
}

export const KEY_CACHE_TTL_MS = 5_000;
const MAX_KEYS = 10_000;

export interface KeyCache {
  /** The key's tenant, from the cache or `lookup` (null: unknown or revoked). */
  tenantOf(key: string, lookup: (key: string) => Promise<string | null>): Promise<string | null>;
}

export function createKeyCache(options: KeyCacheOptions = {}): KeyCache {
  const ttlMs = options.ttlMs ?? KEY_CACHE_TTL_MS;
  const maxKeys = options.maxKeys ?? MAX_KEYS;
  const now = options.now ?? Date.now;
  // by the key's hash: the process never holds a table of raw keys
  const known = new Map<string, { tenantId: string; until: number }>();
  const inFlight = new Map<string, Promise<string | null>>();
  return {
    tenantOf(key, lookup) {
      const id = createHash('sha256').update(key).digest('base64url');
      const entry = known.get(id);
      if (entry && entry.until > now()) return Promise.resolve(entry.tenantId);
      if (entry) known.delete(id);
      const pending = inFlight.get(id);
      if (pending) return pending;
      const read = lookup(key)
        .then((tenantId) => {
          if (tenantId !== null) {
            known.set(id, { tenantId, until: now() + ttlMs });
            if (known.size > maxKeys) known.delete(known.keys().next().value as string);
          }
          return tenantId;
        })
        .finally(() => inFlight.delete(id));
      inFlight.set(id, read);
      return read;
    },
  };
}
