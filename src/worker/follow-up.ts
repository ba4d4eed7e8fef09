import { enqueueCompaction, type Queues } from '../queue/producer.js';
import type { Logger } from '../obs/logger.js';

/**
 * Enqueues a consolidation a commit recorded in its transaction. Never awaited by the
 * compaction that caused it beyond this enqueue; if Redis refuses, the reconciler finds the
 * queued row in Postgres and enqueues it.
 */
export async function enqueueFollowUp(deps: { queues: Pick<Queues, 'compaction'> }, jobId: string, log: Pick<Logger, 'warn' | 'info'>): Promise<void> {
  try {
    await enqueueCompaction(deps.queues, jobId);
    log.info({ consolidationJobId: jobId }, 'consolidation enqueued');
  } catch (error) {
    log.warn({ err: error, consolidationJobId: jobId }, 'could not enqueue the consolidation; the reconciler will');
  }
}
