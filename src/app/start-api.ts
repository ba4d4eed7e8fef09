import { buildApp } from '../api/app.js';
import type { ApiDeps } from '../api/deps.js';
import type { Config } from '../config/env.js';
import { runMigrations } from '../db/migrate.js';
import { ensureBootstrapKey } from './bootstrap.js';
import { createDeps, type Deps } from './deps.js';
import { onShutdownSignal, type ShutdownStep } from './shutdown.js';

export interface RunningApi {
  url: string;
  closeSteps: ShutdownStep[];
  deps: Deps;
}

/** Wires the API over shared deps; returns the steps that stop it (server first). */
export async function listenApi(deps: Deps, extra: Pick<ApiDeps, 'afterAppend'> & Partial<ApiDeps>): Promise<{ url: string; steps: ShutdownStep[] }> {
  const app = await buildApp({ ...deps, ...extra });
  const url = await app.listen({ host: deps.config.host, port: deps.config.port });
  deps.logger.info({ url, docs: `${url}/docs` }, 'compactd api listening');
  return { url, steps: [{ name: 'http', run: () => app.close() }] };
}

/** `compactd api`: HTTP only (jobs are enqueued; `compactd worker` runs them). */
export async function startApi(config: Config): Promise<void> {
  await runMigrations(config.databaseUrl);
  const { deps, closeSteps } = createDeps(config, { name: 'compactd-api' });
  await ensureBootstrapKey(deps.db, config.bootstrapKey);
  const api = await listenApi(deps, { afterAppend: async () => null });
  onShutdownSignal(() => [...api.steps, ...closeSteps], config.shutdownTimeoutMs, deps.logger);
}
