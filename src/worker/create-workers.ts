import { DelayedError, type Job, Worker } from 'bullmq';

import { getJobLogContext, type JobLogContext } from '../db/repos/job-log-context.js';
import type { Phase } from '../obs/metrics.js';
import { JOBS } from '../queue/catalog.js';
import type { RedisConnection } from '../queue/connection.js';
import { advanceFairClock, MAX_PRIORITY, rebaseFairShare } from '../queue/fair-share.js';
import { createFairSlots, ParkStep } from '../queue/fair-slots.js';
import { queuePrefix, QUEUES } from '../queue/names.js';
import type { WorkerDeps } from './deps.js';
import { recordStepError } from './finish.js';
import { classifyForQueue } from './outcome.js';
import { processFinalize } from './processors/finalize.js';
import { processIdleCheck } from './processors/idle.js';
import { processPlan } from './processors/plan.js';
import { processSummarizeChunk } from './processors/summarize.js';
import { processWebhookDelivery, sweepWebhookDeliveries } from './processors/webhook.js';
import { createRecallBackfill } from './recall-indexing.js';
import { reconcileJobs } from './reconciler.js';

/**
 * SPEC §5.6: a SIGKILLed worker's job must be picked up within seconds, not BullMQ's default
 * of about a minute. The lock expires at most `lockDuration` after a worker dies and the stall
 * check runs every `stalledInterval`, so its steps are back in the queue within ~10 s. A
 * frequent check is cheap (one Lua call per queue); a short lock is not: a live worker whose
 * event loop stalls for half of it loses its steps to another worker (see RELIABILITY.md).
 */
export const STALL_SETTINGS = { lockDuration: 8_000, stalledInterval: 2_000, maxStalledCount: 5 } as const;

export interface WorkerOptions {
  compactionConcurrency: number;
  summarizeConcurrency: number;
  /** how often the reconciler sweeps (ms); 0 disables it */
  reconcileEveryMs: number;
  /**
   * how long a non-terminal job, or a pending webhook delivery, must sit untouched before the
   * reconciler or the delivery sweep checks it against Redis (defaults RECONCILE_IDLE_MS and DELIVERY_SWEEP_IDLE_MS)
   */
  reconcileIdleMs?: number;
  /** this process's name on every step it takes (BullMQ `processedBy`): operators and the chaos suites see who holds a step */
  name?: string;
  /** concurrent webhook deliveries (network-bound); default 8 */
  webhookConcurrency?: number;
}

const PHASES: Record<string, Phase> = {
  [JOBS.plan.name]: 'plan',
  [JOBS.summarizeChunk.name]: 'summarize',
  [JOBS.finalize.name]: 'finalize',
  [JOBS.idleCheck.name]: 'idle_check',
  [JOBS.reconcile.name]: 'reconcile',
  [JOBS.deliverWebhook.name]: 'webhook',
};

/** Records the step's duration in `compactd_phase_duration_seconds` (when metrics are wired). */
async function timed<T>(deps: Pick<WorkerDeps, 'metrics'>, job: Job, run: () => Promise<T>): Promise<T> {
  const stop = deps.metrics?.phaseDuration.startTimer({ phase: PHASES[job.name] ?? job.name });
  try {
    const result = await run();
    stop?.({ outcome: 'ok' });
    return result;
  } catch (error) {
    stop?.({ outcome: 'error' });
    throw error;
  }
}

/**
 * A compaction or summarize step starting moves its queue's fair-share clock (queue/fair-share.ts).
 * Ordering only: a Redis hiccup here must not fail the step.
 */
async function noteFairTurn(deps: Pick<WorkerDeps, 'queues' | 'logger'>, job: Job): Promise<void> {
  if (job.queueName !== QUEUES.compaction && job.queueName !== QUEUES.summarize) return;
  await advanceFairClock(deps.queues, job.queueName, job.opts.priority).catch((error: unknown) =>
    deps.logger.debug({ err: error, queueJobId: job.id }, 'could not advance the fair-share clock'),
  );
}

/** The job, conversation and tenant ids of a compaction step, for its log lines. */
async function stepIds(deps: Pick<WorkerDeps, 'db'>, job: Job): Promise<Partial<JobLogContext>> {
  const jobId = (job.data as { jobId?: unknown } | undefined)?.jobId;
  if (typeof jobId !== 'string') return {};
  return (await getJobLogContext(deps.db, jobId).catch(() => null)) ?? { jobId };
}

export function createWorkers(connection: RedisConnection, deps: WorkerDeps, options: WorkerOptions): Worker[] {
  const prefix = queuePrefix(deps.config.queue.prefix);
  const workers: Worker[] = [];
  const settings = { ...STALL_SETTINGS, ...(options.name === undefined ? {} : { name: options.name }) };
  const wrap = (run: (job: Job, signal?: AbortSignal) => Promise<void>) => async (job: Job, token?: string, signal?: AbortSignal) => {
    await noteFairTurn(deps, job);
    try {
      await timed(deps, job, () => run(job, signal));
    } catch (error) {
      if (error instanceof ParkStep && token !== undefined) {
        // No slot for this tenant right now: the step leaves its worker slot to the next
        // tenant's step and comes back when a slot is released (or after the delay).
        await job.moveToDelayed(Date.now() + error.delayMs, token);
        throw new DelayedError();
      }
      const outcome = classifyForQueue(error);
      if (outcome.action === 'defer' && token !== undefined) {
        // Only this step waits out the provider's retry-after (no attempt spent); the queue
        // keeps serving every other step, other providers' and other tenants' alike.
        deps.logger.warn({ queueJob: job.name, queueJobId: job.id, delayMs: outcome.delayMs }, 'provider asked to back off; step deferred');
        await job.moveToDelayed(Date.now() + outcome.delayMs, token);
        throw new DelayedError();
      }
      deps.logger.warn(
        { ...(await stepIds(deps, job)), err: error, queueJob: job.name, queueJobId: job.id, attempt: job.attemptsMade + 1 },
        'step failed',
      );
      const finalAttempt = outcome.action === 'unrecoverable' || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      await recordStepError(
        deps,
        (job.data as { jobId?: unknown } | undefined)?.jobId,
        error,
        finalAttempt && job.queueName === QUEUES.compaction,
      );
      throw outcome.error;
    }
  };

  const compaction = new Worker(
    QUEUES.compaction,
    wrap(async (job, signal) => {
      if (job.name === JOBS.plan.name) return processPlan(JOBS.plan.schema.parse(job.data), deps);
      if (job.name === JOBS.finalize.name) return processFinalize(JOBS.finalize.schema.parse(job.data), deps, signal);
      if (job.name === JOBS.idleCheck.name) {
        await processIdleCheck(JOBS.idleCheck.schema.parse(job.data), deps);
        return;
      }
      throw new Error(`unknown job ${job.name} on queue ${QUEUES.compaction}`);
    }),
    { connection, prefix, concurrency: options.compactionConcurrency, ...settings },
  );
  // One tenant's share of the provider slots (queue/fair-slots.ts), shared by every worker process.
  const slots = createFairSlots(deps.queues.redis, deps.queues.summarize, {
    prefix: deps.config.queue.prefix,
    slots: deps.config.llm.concurrency,
    reserve: deps.config.llm.tenantReservedSlots,
  });
  const summarize = new Worker(
    QUEUES.summarize,
    wrap(async (job, signal) => {
      // the step binds the conversation and tenant to its log lines from the row it reads anyway
      const turn = { slots, stepId: job.id ?? '', priority: job.opts.priority ?? MAX_PRIORITY };
      return processSummarizeChunk(JOBS.summarizeChunk.schema.parse(job.data), deps, signal, turn);
    }),
    { connection, prefix, concurrency: options.summarizeConcurrency, ...settings },
  );
  const recallBackfill = createRecallBackfill(deps.db, deps.logger);
  const maintenance = new Worker(
    QUEUES.maintenance,
    wrap(async () => {
      await reconcileJobs(deps, options.reconcileIdleMs);
      await recallBackfill.step();
      // ordering only: a failure here must not keep the webhook sweep from running
      await Promise.all([deps.queues.compaction, deps.queues.summarize].map((queue) => rebaseFairShare(deps.queues, queue))).catch(
        (error: unknown) => deps.logger.warn({ err: error }, 'could not check the fair-share tags'),
      );
      if (deps.webhooks) await sweepWebhookDeliveries({ ...deps, webhooks: deps.webhooks }, options.reconcileIdleMs);
    }),
    { connection, prefix, concurrency: 1, ...settings },
  );
  workers.push(compaction, summarize, maintenance);
  if (deps.webhooks) {
    const webhookDeps = { ...deps, webhooks: deps.webhooks };
    // Failed attempts are logged by the processor and retried by BullMQ (plain errors).
    const webhooks = new Worker(
      QUEUES.webhooks,
      async (job: Job) =>
        timed(deps, job, () =>
          processWebhookDelivery(JOBS.deliverWebhook.schema.parse(job.data), webhookDeps, {
            final: job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
          }),
        ),
      { connection, prefix, concurrency: options.webhookConcurrency ?? 8, ...settings },
    );
    workers.push(webhooks);
  }
  for (const worker of workers) worker.on('error', (error) => deps.logger.error({ err: error, queue: worker.name }, 'worker error'));
  if (options.reconcileEveryMs > 0) {
    // Asserted again every interval, not only at start: a Redis that lost its data (flushed,
    // restarted without persistence) loses the scheduler too, and with it every later sweep,
    // which is exactly when the sweep is needed. An unchanged upsert keeps its next run time.
    const schedule = () =>
      void deps.queues.maintenance
        .upsertJobScheduler(
          'reconcile',
          { every: options.reconcileEveryMs },
          { name: JOBS.reconcile.name, data: {}, opts: JOBS.reconcile.options },
        )
        .catch((error: unknown) => deps.logger.warn({ err: error }, 'could not schedule the reconciler'));
    schedule();
    const timer = setInterval(schedule, options.reconcileEveryMs);
    timer.unref();
    maintenance.once('closing', () => clearInterval(timer));
  }
  return workers;
}
