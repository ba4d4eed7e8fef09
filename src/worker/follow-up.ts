import { getJob } from '../db/repos/jobs.js';
import type { Db } from '../db/client.js';
import { enqueueCompaction, type Queues } from '../queue/producer.js';
import type { Logger } from '../obs/logger.js';

/**
 * Enqueues a consolidation a commit recorded in its transaction. Never awaited by the
 * compaction that caused it beyond this enqueue; if Redis refuses, the reconciler finds the
 * queued row in Postgres and enqueues it. The row names the tenant, whose fair turn it takes.
 */
export async function enqueueFollowUp(
  deps: { db: Db; queues: Pick<Queues, 'compaction' | 'redis' | 'prefix'> },
  jobId: string,
  log: Pick<Logger, 'warn' | 'info'>,
): Promise<void> {
  try {
    const job = await getJob(deps.db, jobId);
    if (!job) return;
    await enqueueCompaction(deps.queues, job);
    log.info({ consolidationJobId: jobId }, 'consolidation enqueued');
  } catch (error) {
    log.warn({ err: error, consolidationJobId: jobId }, 'could not enqueue the consolidation; the reconciler will');
  }
}
