import type { Config } from '../config/env.js';
import { runMigrations } from '../db/migrate.js';
import { ensureBootstrapKey } from './bootstrap.js';
import { createDeps } from './deps.js';
import { boundHeapGrowth } from './heap-growth.js';
import { onShutdownSignal } from './shutdown.js';
import { listenApi } from './start-api.js';
import { runWorkers } from './start-worker.js';

/** `compactd start`: migrate, then the API and the workers in one process. */
export async function startAll(config: Config): Promise<void> {
  boundHeapGrowth();
  await runMigrations(config.databaseUrl);
  const { deps, closeSteps } = createDeps(config, { name: 'compactd' });
  await ensureBootstrapKey(deps.db, config.bootstrapKey);
  const workers = runWorkers(deps);
  const api = await listenApi(deps);
  // HTTP first (stop intake), then workers (finish active steps), then shared connections.
  onShutdownSignal(() => [...api.steps, ...workers.steps, ...closeSteps], config.shutdownTimeoutMs, deps.logger);
}
