import type { FastifyInstance } from 'fastify';

import { buildApp } from '../api/app.js';
import type { Config } from '../config/env.js';
import { createApiKey } from '../db/repos/api-keys.js';
import type { Logger } from '../obs/logger.js';
import { deleteQueueKeys } from '../queue/cleanup.js';
import type { WorkerDeps } from '../worker/deps.js';
import { createDeps, type Deps } from './deps.js';
import { runShutdown, type ShutdownStep } from './shutdown.js';
import { apiDepsFrom } from './start-api.js';
import { runWorkers } from './start-worker.js';

export interface InProcessService {
  app: FastifyInstance;
  deps: Deps;
  /** an API key of the service's own tenant */
  key: string;
  workerDeps: WorkerDeps | null;
  /** stops HTTP, workers and connections in order, then deletes the queue prefix's keys */
  close(): Promise<void>;
}

/**
 * The whole service in one process, wired by the same code as `compactd start` (API not
 * listening: drive it with `app.inject`, or `listen` it). Tests and the eval use it over a
 * database and a queue prefix of their own.
 */
export async function startInProcess(
  config: Config,
  options: { logger: Logger; tenantName: string; workers?: boolean; workerOverrides?: Partial<WorkerDeps> },
): Promise<InProcessService> {
  const { deps, closeSteps } = createDeps(config, { logger: options.logger, name: `compactd-${options.tenantName}` });
  const workers = options.workers === false ? null : runWorkers(deps, options.workerOverrides);
  const app = await buildApp(apiDepsFrom(deps));
  const { key } = await createApiKey(deps.db, { tenantName: options.tenantName });
  const steps: ShutdownStep[] = [{ name: 'http', run: () => app.close() }, ...(workers?.steps ?? []), ...closeSteps];
  return {
    app,
    deps,
    key,
    workerDeps: workers?.workerDeps ?? null,
    close: async () => {
      await runShutdown(steps, 30_000, options.logger);
      await deleteQueueKeys(config.redisUrl, config.queue.prefix);
    },
  };
}
