import { hostname } from 'node:os';

import type { Config } from '../config/env.js';
import { runMigrations } from '../db/migrate.js';
import { createNativeCompactors, createSummarizers } from '../llm/create-summarizer.js';
import { DEFAULT_RETRY_POLICY } from '../llm/retry.js';
import { instrumentSummarizers } from '../obs/llm-metrics.js';
import { createWorkerConnection } from '../queue/connection.js';
import { cancelChannel } from '../queue/names.js';
import { createCancelRegistry } from '../worker/cancel-registry.js';
import { createWorkers } from '../worker/create-workers.js';
import type { WorkerDeps } from '../worker/deps.js';
import { createJobEvents } from '../worker/job-events.js';
import { createDeps, type Deps } from './deps.js';
import { boundHeapGrowth } from './heap-growth.js';
import { serveMetrics } from './metrics-server.js';
import { onShutdownSignal, type ShutdownStep } from './shutdown.js';

export const RECONCILE_EVERY_MS = 15_000;

/**
 * Starts the queue workers over shared deps. Shutdown order: stop taking jobs and let
 * active steps finish (`worker.close()` waits), then drop the cancel subscription and
 * the blocking connection.
 */
export function runWorkers(deps: Deps, overrides: Partial<WorkerDeps> = {}): { steps: ShutdownStep[]; workerDeps: WorkerDeps } {
  const { config, logger } = deps;
  const connection = createWorkerConnection(config.redisUrl);
  const subscriber = createWorkerConnection(config.redisUrl, 'compactd-cancel');
  connection.on('error', (error) => logger.warn({ err: error }, 'worker redis error'));
  subscriber.on('error', (error) => logger.warn({ err: error }, 'cancel subscriber redis error'));
  const cancels = createCancelRegistry();
  const channel = cancelChannel(config.queue.prefix);
  void subscriber.subscribe(channel).catch((error: unknown) => logger.error({ err: error }, 'could not subscribe to cancellations'));
  subscriber.on('message', (from, jobId) => {
    if (from === channel && cancels.cancel(jobId) > 0) logger.info({ jobId }, 'aborted in-flight calls of a cancelled job');
  });
  const summarizers = createSummarizers(config, {
    redis: deps.redis,
    keyPrefix: config.queue.prefix,
    countTokens: deps.countTokens,
    retryPolicy: DEFAULT_RETRY_POLICY,
    onRetry: (info) => deps.metrics.llmRetries.inc({ provider: info.provider }),
  });
  const compactors = createNativeCompactors(config);
  const base: WorkerDeps = {
    config,
    db: deps.db,
    logger,
    queues: deps.queues,
    countTokens: deps.countTokens,
    summarizers: instrumentSummarizers(summarizers, deps.metrics),
    compactors,
    retryPolicy: DEFAULT_RETRY_POLICY,
    cancels,
    metrics: deps.metrics,
    webhooks: { queue: deps.webhookQueue, ...config.webhooks },
    ...overrides,
  };
  // Metrics and webhooks observe every finished job; a test's own observer runs as well.
  const jobEvents = createJobEvents(base, { pauseBeforeDispatchMs: config.faults.pauseBeforeDispatchMs });
  const workerDeps: WorkerDeps = {
    ...base,
    onJobFinished: (event) => {
      jobEvents.onJobFinished(event);
      overrides.onJobFinished?.(event);
    },
  };
  const workers = createWorkers(connection, workerDeps, {
    compactionConcurrency: config.queue.compactionConcurrency,
    summarizeConcurrency: config.queue.summarizeConcurrency,
    reconcileEveryMs: config.reconcile.everyMs,
    reconcileIdleMs: config.reconcile.idleMs,
    name: `${hostname()}:${process.pid}`,
  });
  logger.info({ queues: workers.map((w) => w.name), summarizer: config.summarizer }, 'compactd workers started');
  return {
    workerDeps,
    steps: [
      { name: 'workers', run: () => Promise.all(workers.map((w) => w.close())) },
      { name: 'job-events', run: () => jobEvents.drain() },
      { name: 'cancel-subscriber', run: () => subscriber.quit().catch(() => subscriber.disconnect()) },
      { name: 'worker-redis', run: () => connection.quit().catch(() => connection.disconnect()) },
    ],
  };
}

/** `compactd worker`: the queue workers only. */
export async function startWorker(config: Config): Promise<void> {
  boundHeapGrowth();
  await runMigrations(config.databaseUrl);
  const { deps, closeSteps } = createDeps(config, { name: 'compactd-worker' });
  const workers = runWorkers(deps);
  // The API serves /metrics itself; a worker-only process serves its own when asked to.
  const metrics =
    config.metrics.port === undefined
      ? null
      : await serveMetrics(deps.metrics.registry, { host: config.host, port: config.metrics.port, token: config.metrics.token });
  if (metrics) deps.logger.info({ url: `${metrics.url}/metrics` }, 'worker metrics listening');
  const metricsSteps = metrics ? [{ name: 'metrics-http', run: () => metrics.close() }] : [];
  onShutdownSignal(() => [...metricsSteps, ...workers.steps, ...closeSteps], config.shutdownTimeoutMs, deps.logger);
}
