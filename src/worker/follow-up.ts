import type { Logger } from '../obs/logger.js';
import { enqueueCompaction, type QueuedJobRef, type Queues } from '../queue/producer.js';

/**
 * Enqueues a consolidation a commit recorded in its transaction. Never awaited by the
 * compaction that caused it beyond this enqueue; if Redis refuses, the reconciler finds the
 * queued row in Postgres and enqueues it. It belongs to the committing job's conversation, so
 * to its tenant, whose fair turn it takes.
 */
export async function enqueueFollowUp(
  deps: { queues: Pick<Queues, 'compaction' | 'redis' | 'prefix'> },
  job: QueuedJobRef,
  log: Pick<Logger, 'warn' | 'info'>,
): Promise<void> {
  try {
    await enqueueCompaction(deps.queues, job);
    log.info({ consolidationJobId: job.id }, 'consolidation enqueued');
  } catch (error) {
    log.warn({ err: error, consolidationJobId: job.id }, 'could not enqueue the consolidation; the reconciler will');
  }
}
