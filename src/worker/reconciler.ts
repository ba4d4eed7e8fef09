import { listStaleActiveJobs, touchJob } from '../db/repos/jobs.js';
import { enqueueCompaction, hasQueuedStep } from '../queue/producer.js';
import type { WorkerDeps } from './deps.js';

/** Jobs untouched this long are checked against Redis. */
export const RECONCILE_IDLE_MS = 20_000;

/**
 * Postgres is the source of truth. A non-terminal job whose steps are gone from Redis
 * (Redis flushed or restarted without persistence, an enqueue that failed after the row
 * was committed) is enqueued again from its plan step, which resumes from what is stored.
 */
export async function reconcileJobs(deps: Pick<WorkerDeps, 'db' | 'queues' | 'logger'>, idleMs = RECONCILE_IDLE_MS): Promise<number> {
  const stale = await listStaleActiveJobs(deps.db, idleMs);
  let requeued = 0;
  for (const job of stale) {
    if (await hasQueuedStep(deps.queues, job.id)) continue;
    // A completed plan step keeps its BullMQ id; remove it so the same id can be added again.
    await deps.queues.compaction.remove(job.id).catch(() => 0);
    await enqueueCompaction(deps.queues, job);
    await touchJob(deps.db, job.id);
    requeued += 1;
    deps.logger.warn({ jobId: job.id, status: job.status }, 'reconciler re-enqueued a job missing from Redis');
  }
  return requeued;
}
