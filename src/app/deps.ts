import type { Queue } from 'bullmq';

import type { CountTokens } from '../compaction/types.js';
import type { Config } from '../config/env.js';
import { createDb, type DbHandle } from '../db/client.js';
import { countTokens } from '../lib/count-tokens.js';
import { createLogger, type Logger } from '../obs/logger.js';
import { createMetrics, type Metrics } from '../obs/metrics.js';
import { createProducerConnection, type RedisConnection } from '../queue/connection.js';
import { closeQueues, createQueues, type Queues } from '../queue/producer.js';
import { createWebhookQueue } from '../queue/webhooks.js';
import type { ShutdownStep } from './shutdown.js';
import { createTokenCountPool, type TokenCountPool } from './token-count-pool.js';

export interface Deps {
  config: Config;
  logger: Logger;
  db: DbHandle['db'];
  sql: DbHandle['sql'];
  /**
   * The API's own pool, whose connections carry `statement_timeout` (COMPACTD_API_STATEMENT_TIMEOUT_MS):
   * no request holds a backend for long, while the worker's steps (the pool above) keep none.
   * Connections open on first use, so a worker-only process opens none.
   */
  api: Pick<DbHandle, 'db' | 'sql'>;
  /** fail-fast connection for producers and health checks */
  redis: RedisConnection;
  queues: Queues;
  /** webhook deliveries (kept apart from `Queues`: the compaction flow never touches it) */
  webhookQueue: Queue;
  countTokens: CountTokens;
  /** threads that count big appends off the API's event loop (started on first use) */
  tokenCountPool: TokenCountPool;
  metrics: Metrics;
}

/** The one place that constructs the shared adapters (composition root). */
export function createDeps(config: Config, options: { logger?: Logger; name?: string } = {}): { deps: Deps; closeSteps: ShutdownStep[] } {
  const logger = options.logger ?? createLogger(config);
  const handle = createDb(config.databaseUrl, { name: options.name ?? 'compactd' });
  const apiHandle = createDb(config.databaseUrl, {
    name: `${options.name ?? 'compactd'}-http`,
    statementTimeoutMs: config.apiLimits.statementTimeoutMs,
  });
  const redis = createProducerConnection(config.redisUrl, `${options.name ?? 'compactd'}-producer`);
  redis.on('error', (error) => logger.warn({ err: error }, 'redis connection error'));
  const queues = createQueues(redis, config.queue.prefix);
  const webhookQueue = createWebhookQueue(redis, config.queue.prefix);
  const tokenCountPool = createTokenCountPool();
  const metrics = createMetrics({
    queues: { compaction: queues.compaction, summarize: queues.summarize, maintenance: queues.maintenance, webhooks: webhookQueue },
  });
  return {
    deps: {
      config,
      logger,
      db: handle.db,
      sql: handle.sql,
      api: { db: apiHandle.db, sql: apiHandle.sql },
      redis,
      queues,
      webhookQueue,
      countTokens,
      tokenCountPool,
      metrics,
    },
    closeSteps: [
      { name: 'queues', run: () => Promise.allSettled([closeQueues(queues), webhookQueue.close()]) },
      { name: 'redis', run: () => redis.quit().catch(() => redis.disconnect()) },
      { name: 'postgres', run: () => Promise.all([handle.close(), apiHandle.close()]) },
      { name: 'token-count-threads', run: () => tokenCountPool.close() },
    ],
  };
}
