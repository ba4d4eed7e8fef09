import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { buildApp } from '../../src/api/app.js';
import { createDeps, type Deps } from '../../src/app/deps.js';
import { runShutdown, type ShutdownStep } from '../../src/app/shutdown.js';
import { apiDepsFrom } from '../../src/app/start-api.js';
import { runWorkers } from '../../src/app/start-worker.js';
import { loadConfig } from '../../src/config/env.js';
import { createApiKey } from '../../src/db/repos/api-keys.js';
import type { WorkerDeps } from '../../src/worker/deps.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { TEST_REDIS_URL } from './services.js';

export interface Stack {
  app: FastifyInstance;
  deps: Deps;
  db: TestDatabase;
  /** a queue prefix of its own, so parallel files never share queues */
  prefix: string;
  env: Record<string, string>;
  key: string;
  workerDeps: WorkerDeps | null;
  auth(): { authorization: string };
  close(): Promise<void>;
}

/**
 * The whole service in-process over real Postgres (a database of its own) and real Redis
 * (a queue prefix of its own): API + workers wired by the same composition code as
 * `compactd start`. `workers: false` leaves the work to child processes started by the test.
 */
export async function createStack(
  options: { env?: Record<string, string>; workers?: boolean; workerOverrides?: Partial<WorkerDeps>; logger?: Logger } = {},
): Promise<Stack> {
  const db = await createTestDatabase();
  const prefix = `t${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const env = { DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, COMPACTD_QUEUE_PREFIX: prefix, ...options.env };
  const config = loadConfig(env);
  const logger = options.logger ?? pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
  const { deps, closeSteps } = createDeps(config, { logger, name: 'compactd-test' });
  const workers = options.workers === false ? null : runWorkers(deps, options.workerOverrides);
  const app = await buildApp(apiDepsFrom(deps));
  const { key } = await createApiKey(db.db, { tenantName: 'e2e' });
  const steps: ShutdownStep[] = [{ name: 'http', run: () => app.close() }, ...(workers?.steps ?? []), ...closeSteps];
  return {
    app,
    deps,
    db,
    prefix,
    env,
    key,
    workerDeps: workers?.workerDeps ?? null,
    auth: () => ({ authorization: `Bearer ${key}` }),
    close: async () => {
      await runShutdown(steps, 30_000, logger);
      await deleteQueueKeys(deps, prefix);
      await db.drop();
    },
  };
}

async function deleteQueueKeys(deps: Deps, prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(deps.config.redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `{${prefix}}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
