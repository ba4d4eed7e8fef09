import { Redis } from 'ioredis';
import type { Config } from '../config/env.js';
import { createDb, type DbHandle } from '../db/client.js';
import { countTokens } from '../lib/count-tokens.js';
import { createLogger, type Logger } from '../obs/logger.js';
import type { CountTokens } from '../compaction/types.js';
import type { ShutdownStep } from './shutdown.js';

export interface Deps {
  config: Config;
  logger: Logger;
  db: DbHandle['db'];
  sql: DbHandle['sql'];
  /** fail-fast connection for producers and health checks */
  redis: Redis;
  countTokens: CountTokens;
}

/** The one place that constructs adapters (composition root). */
export function createDeps(config: Config, options: { logger?: Logger; name?: string } = {}): { deps: Deps; closeSteps: ShutdownStep[] } {
  const logger = options.logger ?? createLogger(config);
  const handle = createDb(config.databaseUrl, { name: options.name ?? 'compactd' });
  const redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
  redis.on('error', (error) => logger.warn({ err: error }, 'redis connection error'));
  return {
    deps: { config, logger, db: handle.db, sql: handle.sql, redis, countTokens },
    closeSteps: [
      { name: 'redis', run: () => redis.quit().catch(() => redis.disconnect()) },
      { name: 'postgres', run: () => handle.close() },
    ],
  };
}
