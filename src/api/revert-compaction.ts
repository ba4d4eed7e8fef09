import type { Db, Tx } from '../db/client.js';
import { lockArchiveForRemoval, withConversationLock } from '../db/locks.js';
import { activeTotals } from '../db/repos/compaction-writes.js';
import { findActiveJob, getJob, type JobRow } from '../db/repos/jobs.js';
import {
  completedJobsAfter,
  deleteArchivedByJob,
  deleteBatchesOfJob,
  deleteClipArchive,
  markReverted,
  previousWatermark,
  restoreRemovedMessages,
  restoreRewrittenMessages,
  settleRevertedConversation,
} from '../db/repos/revert-writes.js';
import { AppError } from '../lib/errors.js';
import { sqlStateOf } from '../lib/public-error.js';

/**
 * Undoes a compaction in one transaction under the conversation lock: the new clip-archive
 * goes, the originals and the previous clip-archive come back, batches are dropped (and the
 * ones a consolidation absorbed are live again). Only the conversation's latest compaction
 * can be reverted, and not while another compaction is running. Consolidations that
 * committed after it (they merged its batches or rewrote its clip-archive) are undone first,
 * newest first, in the same transaction; a consolidation can also be reverted on its own
 * when it is the latest. The history afterwards is exactly the one before the compaction
 * plus anything appended since. A revert Postgres rolls back for a concurrent transaction's
 * sake answers 409 REVERT_CONFLICT: it changed nothing and can be repeated.
 */
export async function revertCompaction(db: Db, job: Pick<JobRow, 'id' | 'conversationId'>): Promise<JobRow> {
  try {
    return await db.transaction((tx) => revertInTransaction(tx, job));
  } catch (error) {
    // Postgres rolled the whole revert back for another transaction's sake (a deadlock it
    // lost, a serialization failure): nothing changed, and the same request can be repeated
    if (TRANSACTION_CONFLICTS.has(sqlStateOf(error) ?? '')) {
      throw new AppError(
        'REVERT_CONFLICT',
        'the revert conflicted with concurrent work on this conversation and changed nothing; retry it',
        { status: 409, cause: error },
      );
    }
    throw error;
  }
}

/** serialization_failure, deadlock_detected */
const TRANSACTION_CONFLICTS = new Set(['40001', '40P01']);

async function revertInTransaction(tx: Tx, job: Pick<JobRow, 'id' | 'conversationId'>): Promise<JobRow> {
  await withConversationLock(tx, job.conversationId);
  const current = await getJob(tx, job.id);
  if (!current || current.status !== 'completed' || current.result?.['revertedAt'] !== undefined) {
    throw new AppError('JOB_NOT_REVERTIBLE', `job ${job.id} is not a completed compaction that can be reverted`, { status: 409 });
  }
  const later = await completedJobsAfter(tx, current);
  if (later.some((j) => j.trigger !== 'consolidate')) {
    throw new AppError('NOT_LATEST_COMPACTION', 'only the latest compaction of a conversation can be reverted', { status: 409 });
  }
  if (current.trigger !== 'consolidate' && (await findActiveJob(tx, job.conversationId))) {
    throw new AppError('COMPACTION_RUNNING', 'a compaction of this conversation is running; cancel it or wait', { status: 409 });
  }
  // the deletes below must not interleave with a recall indexer pass over the same archive
  // (a lock-order deadlock between the two): wait for a pass in flight, keep new ones out
  await lockArchiveForRemoval(tx, job.conversationId);
  for (const consolidation of later) await undoJob(tx, consolidation);
  await undoJob(tx, current);
  const totals = await activeTotals(tx, job.conversationId);
  const compaction =
    current.trigger !== 'consolidate' ? { lastCompactedSeq: await previousWatermark(tx, job.conversationId, job.id) } : null;
  await settleRevertedConversation(tx, job.conversationId, totals, compaction);
  const reverted = await getJob(tx, job.id);
  if (!reverted) throw new Error(`job ${job.id} vanished during revert`);
  return reverted;
}

/** What one job wrote, undone set-based. */
async function undoJob(tx: Tx, job: JobRow): Promise<void> {
  const clipSeq = job.result?.['clipArchiveSeq'];
  if (typeof clipSeq === 'number') await deleteClipArchive(tx, job.conversationId, clipSeq);
  await restoreRewrittenMessages(tx, job.id);
  await restoreRemovedMessages(tx, job.id);
  await deleteArchivedByJob(tx, job.id);
  await deleteBatchesOfJob(tx, job.id);
  await markReverted(tx, job.id);
}
