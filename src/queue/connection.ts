import { Redis } from 'ioredis';

/**
 * Workers block on Redis and must wait through reconnects (BullMQ requires
 * `maxRetriesPerRequest: null`); producers fail fast so an HTTP request never hangs
 * on a dead Redis (`enableOfflineQueue: false`).
 */
export function createWorkerConnection(url: string, connectionName = 'compactd-worker'): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, connectionName });
}

export function createProducerConnection(url: string, connectionName = 'compactd-producer'): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectionName });
}
