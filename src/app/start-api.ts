import { buildApp } from '../api/app.js';
import { autoTriggerAfterAppend } from '../api/auto-trigger.js';
import type { ApiDeps, AppendEffects } from '../api/deps.js';
import type { Config } from '../config/env.js';
import { runMigrations } from '../db/migrate.js';
import { scheduleIdleCheck } from '../queue/idle.js';
import { enqueueCompaction, publishCancel } from '../queue/producer.js';
import { enqueueWebhookDelivery } from '../queue/webhooks.js';
import { ensureBootstrapKey } from './bootstrap.js';
import { createDeps, type Deps } from './deps.js';
import { onShutdownSignal, type ShutdownStep } from './shutdown.js';

export function apiDepsFrom(deps: Deps): ApiDeps {
  return {
    ...deps,
    // every query a request makes runs under the API pool's statement_timeout
    db: deps.api.db,
    sql: deps.api.sql,
    countTokensOffLoop: (text) => deps.tokenCountPool.count(text),
    offLoopThreads: deps.tokenCountPool.size,
    afterAppend: autoTriggerAfterAppend,
    onAppendCommitted: (conversationId, effects) => runAppendEffects(deps, conversationId, effects),
    dashboardQueues: [deps.queues.compaction, deps.queues.summarize, deps.queues.maintenance, deps.webhookQueue],
    webhookDeliveries: { enqueue: (deliveryId) => enqueueWebhookDelivery(deps.webhookQueue, deliveryId, deps.config.webhooks) },
    compactions: {
      enqueue: (job) => enqueueCompaction(deps.queues, job),
      cancel: (jobId) => publishCancel(deps.queues, jobId),
    },
  };
}

/** What an append's transaction left to the queue: webhook deliveries, the idle check. */
async function runAppendEffects(deps: Deps, conversationId: string, effects: AppendEffects): Promise<void> {
  await Promise.all([
    ...effects.webhookDeliveryIds.map((id) => enqueueWebhookDelivery(deps.webhookQueue, id, deps.config.webhooks)),
    ...(effects.idleCheckDelayMs === null ? [] : [scheduleIdleCheck(deps.queues.compaction, conversationId, effects.idleCheckDelayMs)]),
  ]);
}

/** Serves the API over shared deps; returns the step that stops it (first in shutdown order). */
export async function listenApi(deps: Deps): Promise<{ url: string; steps: ShutdownStep[] }> {
  const app = await buildApp(apiDepsFrom(deps));
  // the API counts every message appended: its tokenizer table loads before the first request, not during it (~1 s)
  deps.countTokens('compactd api');
  const url = await app.listen({ host: deps.config.host, port: deps.config.port });
  deps.logger.info({ url, docs: `${url}/docs` }, 'compactd api listening');
  return { url, steps: [{ name: 'http', run: () => app.close() }] };
}

/** `compactd api`: HTTP only (jobs are enqueued; `compactd worker` runs them). */
export async function startApi(config: Config): Promise<void> {
  await runMigrations(config.databaseUrl);
  const { deps, closeSteps } = createDeps(config, { name: 'compactd-api' });
  await ensureBootstrapKey(deps.db, config.bootstrapKey);
  const api = await listenApi(deps);
  onShutdownSignal(() => [...api.steps, ...closeSteps], config.shutdownTimeoutMs, deps.logger);
}
