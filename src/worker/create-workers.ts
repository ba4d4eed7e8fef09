import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { eq } from 'drizzle-orm';
import { JOBS } from '../queue/catalog.js';
import { queuePrefix, QUEUES } from '../queue/names.js';
import { compactionJobs } from '../db/schema.js';
import { getJob } from '../db/repos/jobs.js';
import { coerceError } from '../lib/errors.js';
import type { WorkerDeps } from './deps.js';
import { finishJob, notifyFinished } from './finish.js';
import { toBullmqError } from './outcome.js';
import { processFinalize } from './processors/finalize.js';
import { processPlan } from './processors/plan.js';
import { processSummarizeChunk } from './processors/summarize.js';
import { reconcileJobs } from './reconciler.js';

/**
 * SPEC §5.6: a SIGKILLed worker's job must be picked up within seconds, not BullMQ's default
 * of about a minute. The lock expires after `lockDuration` and the stall check runs every
 * `stalledInterval`, so a dead worker's step resumes within ~12 s.
 */
export const STALL_SETTINGS = { lockDuration: 8_000, stalledInterval: 4_000, maxStalledCount: 5 } as const;

export interface WorkerOptions {
  compactionConcurrency: number;
  summarizeConcurrency: number;
  /** how often the reconciler sweeps (ms); 0 disables it */
  reconcileEveryMs: number;
}

export function createWorkers(connection: Redis, deps: WorkerDeps, options: WorkerOptions): Worker[] {
  const prefix = queuePrefix(deps.config.queue.prefix);
  const wrap = (run: (job: Job, signal?: AbortSignal) => Promise<void>) => async (job: Job, _token?: string, signal?: AbortSignal) => {
    try {
      await run(job, signal);
    } catch (error) {
      deps.logger.warn({ err: error, queueJob: job.name, queueJobId: job.id, attempt: job.attemptsMade + 1 }, 'step failed');
      const mapped = toBullmqError(error);
      const finalAttempt = mapped instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      await recordStepError(deps, job, error, finalAttempt && job.queueName === QUEUES.compaction);
      throw mapped;
    }
  };

  const compaction = new Worker(
    QUEUES.compaction,
    wrap(async (job, signal) => {
      if (job.name === JOBS.plan.name) return processPlan(JOBS.plan.schema.parse(job.data), deps);
      if (job.name === JOBS.finalize.name) return processFinalize(JOBS.finalize.schema.parse(job.data), deps, signal);
      throw new Error(`unknown job ${job.name} on queue ${QUEUES.compaction}`);
    }),
    { connection, prefix, concurrency: options.compactionConcurrency, ...STALL_SETTINGS },
  );
  const summarize = new Worker(
    QUEUES.summarize,
    wrap(async (job, signal) => processSummarizeChunk(JOBS.summarizeChunk.schema.parse(job.data), deps, signal)),
    { connection, prefix, concurrency: options.summarizeConcurrency, ...STALL_SETTINGS },
  );
  const maintenance = new Worker(
    QUEUES.maintenance,
    wrap(async () => {
      await reconcileJobs(deps);
    }),
    { connection, prefix, concurrency: 1, ...STALL_SETTINGS },
  );
  const workers = [compaction, summarize, maintenance];
  for (const worker of workers) worker.on('error', (error) => deps.logger.error({ err: error, queue: worker.name }, 'worker error'));
  if (options.reconcileEveryMs > 0) {
    void deps.queues.maintenance
      .upsertJobScheduler('reconcile', { every: options.reconcileEveryMs }, { name: JOBS.reconcile.name, data: {}, opts: JOBS.reconcile.options })
      .catch((error: unknown) => deps.logger.error({ err: error }, 'could not schedule the reconciler'));
  }
  return workers;
}

/**
 * Postgres is the source of truth: the last step error is visible on the job row, and when a
 * plan or finalize step fails for good the job fails (nothing was committed: the commit is
 * one transaction). A failed summarize step is left to finalize, which applies the policy.
 */
async function recordStepError(deps: Pick<WorkerDeps, 'db' | 'logger' | 'onJobFinished'>, job: Job, error: unknown, failJob: boolean): Promise<void> {
  const jobId = (job.data as { jobId?: unknown } | undefined)?.jobId;
  if (typeof jobId !== 'string') return;
  const err = coerceError(error);
  const code = typeof (err as { code?: unknown }).code === 'string' ? (err as unknown as { code: string }).code : 'STEP_FAILED';
  try {
    const detail = { code, message: err.message.slice(0, 2_000) };
    const row = failJob ? await getJob(deps.db, jobId) : null;
    if (row) {
      const finished = await finishJob(deps.db, row, 'failed', { error: detail, pauseAutoUntilSeq: row.watermark });
      notifyFinished(deps, finished, finished?.tenantId ?? '');
      if (finished) return;
    }
    await deps.db.update(compactionJobs).set({ error: detail }).where(eq(compactionJobs.id, jobId));
  } catch (writeError) {
    deps.logger.error({ err: writeError, jobId }, 'could not record the step error');
  }
}
