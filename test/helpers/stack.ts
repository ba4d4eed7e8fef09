import { randomUUID } from 'node:crypto';

import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';

import type { Deps } from '../../src/app/deps.js';
import { startInProcess } from '../../src/app/in-process.js';
import { loadConfig } from '../../src/config/env.js';
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
  const service = await startInProcess(config, {
    logger,
    tenantName: 'e2e',
    ...(options.workers === undefined ? {} : { workers: options.workers }),
    ...(options.workerOverrides ? { workerOverrides: options.workerOverrides } : {}),
  });
  return {
    app: service.app,
    deps: service.deps,
    db,
    prefix,
    env,
    key: service.key,
    workerDeps: service.workerDeps,
    auth: () => ({ authorization: `Bearer ${service.key}` }),
    close: async () => {
      await service.close();
      await db.drop();
    },
  };
}
