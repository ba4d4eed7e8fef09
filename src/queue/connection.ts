import { Cluster, Redis } from 'ioredis';

import { parseRedisUrl, type RedisTarget } from '../config/redis-url.js';

/** One Redis server or a Redis Cluster, as `REDIS_URL` says (config/redis-url.ts). */
export type RedisConnection = Redis | Cluster;

/** What differs between this service's connections (the rest is ioredis' defaults). */
export interface ConnectionOptions {
  maxRetriesPerRequest: number | null;
  enableOfflineQueue?: boolean;
  enableReadyCheck?: boolean;
  connectionName?: string;
}

/**
 * Workers block on Redis and must wait through reconnects (BullMQ requires
 * `maxRetriesPerRequest: null`); producers fail fast so an HTTP request never hangs
 * on a dead Redis (`enableOfflineQueue: false`).
 */
export function createWorkerConnection(url: string, connectionName = 'compactd-worker'): RedisConnection {
  return createRedisConnection(url, { maxRetriesPerRequest: null, enableReadyCheck: true, connectionName });
}

export function createProducerConnection(url: string, connectionName = 'compactd-producer'): RedisConnection {
  return createRedisConnection(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectionName });
}

/** A client for `url` with the given per-connection options (an ioredis `Cluster` for a cluster URL). */
export function createRedisConnection(url: string, options: ConnectionOptions): RedisConnection {
  const parsed = parseRedisUrl(url);
  if (!parsed.ok) throw new Error(`REDIS_URL: ${parsed.message}`);
  return connect(parsed.target, options);
}

function connect(target: RedisTarget, options: ConnectionOptions): RedisConnection {
  if (target.kind === 'single') return new Redis(target.url, options);
  // The offline queue and the ready check belong to the cluster client, the rest to each node's connection.
  const { enableOfflineQueue, enableReadyCheck, ...perNode } = options;
  return new Cluster(target.nodes, {
    redisOptions: {
      ...perNode,
      ...(target.username === undefined ? {} : { username: target.username }),
      ...(target.password === undefined ? {} : { password: target.password }),
      ...(target.tls ? { tls: {} } : {}),
    },
    // With TLS the seeds stay host names, so each certificate is checked against the name it was issued for.
    ...(target.tls
      ? { dnsLookup: (address: string, callback: (error: Error | null, address: string) => void) => callback(null, address) }
      : {}),
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(enableReadyCheck === undefined ? {} : { enableReadyCheck }),
    // A failover moves slots to a promoted replica: learn the new map instead of giving up.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    slotsRefreshTimeout: 2_000,
  });
}

/** The masters of a cluster (each holds its own share of the keys); a single server is its own only node. */
export async function primaryNodes(connection: RedisConnection): Promise<Redis[]> {
  if (!(connection instanceof Cluster)) return [connection];
  // The node list is known once the client has read the slot map.
  await connection.ping();
  return connection.nodes('master');
}
