import { createRedisConnection, primaryNodes } from './connection.js';
import { queuePrefix } from './names.js';

/** Deletes every key under a queue prefix (test and eval runs clean up after themselves). */
export async function deleteQueueKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = createRedisConnection(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    // SCAN sees one server's keys: on a cluster, every master is scanned (the hash tag puts
    // the prefix's keys on one of them, which one depends on the name).
    for (const node of await primaryNodes(redis)) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${queuePrefix(prefix)}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await node.del(...keys);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
}
