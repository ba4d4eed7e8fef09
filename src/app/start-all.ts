import type { Config } from '../config/env.js';
import { runMigrations } from '../db/migrate.js';
import { ensureBootstrapKey } from './bootstrap.js';
import { createDeps } from './deps.js';
import { onShutdownSignal } from './shutdown.js';
import { listenApi } from './start-api.js';

/** `compactd start`: migrate, then serve the API (and the workers, in one process). */
export async function startAll(config: Config): Promise<void> {
  await runMigrations(config.databaseUrl);
  const { deps, closeSteps } = createDeps(config, { name: 'compactd' });
  await ensureBootstrapKey(deps.db, config.bootstrapKey);
  const api = await listenApi(deps, { afterAppend: async () => null });
  onShutdownSignal(() => [...api.steps, ...closeSteps], config.shutdownTimeoutMs, deps.logger);
}
