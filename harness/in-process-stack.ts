import { randomUUID } from 'node:crypto';

import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';

import type { Deps } from '../src/app/deps.js';
import { startInProcess } from '../src/app/in-process.js';
import { loadConfig } from '../src/config/env.js';
import type { WorkerDeps } from '../src/worker/deps.js';
import type { ScratchDatabase } from './scratch-database.js';

/**
 * The whole service in this process, wired by the same composition code as `compactd start`
 * (API + workers), over a database of its own and a queue prefix of its own on a running
 * Redis, driven through `app.inject`. The tests and the eval start it; nothing in it is mocked.
 */
export interface InProcessStack {
  app: FastifyInstance;
  deps: Deps;
  db: ScratchDatabase;
  /** a queue prefix of its own, so stacks running at once never share queues */
  prefix: string;
  /** the environment the service was configured from (for child processes joining it) */
  env: Record<string, string>;
  /** an API key of the stack's tenant */
  key: string;
  workerDeps: WorkerDeps | null;
  auth(): { authorization: string };
  /** stops the service and drops its database */
  close(): Promise<void>;
}

export interface InProcessStackOptions {
  /** the stack owns it from here: `close()` drops it */
  database: ScratchDatabase;
  redisUrl: string;
  /** configuration on top of (and able to replace) the database, Redis and queue prefix: provider URLs and keys, limits; an undefined entry is left out */
  env?: Record<string, string | undefined>;
  tenantName: string;
  /** `false`: no workers here (the work goes to child processes the caller starts) */
  workers?: boolean;
  workerOverrides?: Partial<WorkerDeps>;
  logger?: Logger;
  /** a short tag the queue prefix starts with */
  prefixTag?: string;
}

export async function startInProcessStack(options: InProcessStackOptions): Promise<InProcessStack> {
  const prefix = `${options.prefixTag ?? 't'}${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const given = Object.fromEntries(Object.entries(options.env ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const env = { DATABASE_URL: options.database.url, REDIS_URL: options.redisUrl, COMPACTD_QUEUE_PREFIX: prefix, ...given };
  const logger = options.logger ?? pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
  const service = await startInProcess(loadConfig(env), {
    logger,
    tenantName: options.tenantName,
    ...(options.workers === undefined ? {} : { workers: options.workers }),
    ...(options.workerOverrides ? { workerOverrides: options.workerOverrides } : {}),
  }).catch(async (error: unknown) => {
    await options.database.drop();
    throw error;
  });
  return {
    app: service.app,
    deps: service.deps,
    db: options.database,
    prefix,
    env,
    key: service.key,
    workerDeps: service.workerDeps,
    auth: () => ({ authorization: `Bearer ${service.key}` }),
    close: async () => {
      await service.close();
      await options.database.drop();
    },
  };
}
