import type { Db } from '../db/client.js';
import { pauseAutoCompaction } from '../db/repos/conversations.js';
import { recordJobEvent } from '../db/repos/job-outbox.js';
import { getJob, type JobRow, recordJobError, transitionJob } from '../db/repos/jobs.js';
import { ACTIVE_JOB_STATUSES, type JobStatus } from '../db/schema.js';
import { publicError } from '../lib/public-error.js';
import type { WorkerDeps } from './deps.js';

export interface Finished {
  job: JobRow;
  /** the webhook delivery recorded with the status, to enqueue after the commit */
  deliveryId: string | null;
}

/**
 * Terminal transitions of a job, with their event (the outbox) in the same transaction.
 * Only an active job can finish, so a late step of a cancelled job never overwrites its status.
 */
export async function finishJob(
  db: Db,
  job: Pick<JobRow, 'id' | 'conversationId' | 'trigger'>,
  status: Extract<JobStatus, 'failed' | 'noop'>,
  detail: { result?: Record<string, unknown>; error?: { code: string; message: string }; pauseAutoUntilSeq?: number | null },
): Promise<Finished | null> {
  return db.transaction(async (tx) => {
    const row = await transitionJob(tx, job.id, ACTIVE_JOB_STATUSES, {
      status,
      finishedAt: new Date(),
      ...(detail.result ? { result: detail.result } : {}),
      ...(detail.error ? { error: detail.error } : {}),
    });
    if (!row) return null;
    // SPEC §5.1/§5.6a: after a failed or insufficient auto attempt, no new auto attempt until new messages arrive.
    if (job.trigger !== 'api' && job.trigger !== 'tool' && job.trigger !== 'consolidate' && detail.pauseAutoUntilSeq != null) {
      await pauseAutoCompaction(tx, job.conversationId, detail.pauseAutoUntilSeq);
    }
    return { job: row, deliveryId: await recordJobEvent(tx, row) };
  });
}

export function notifyFinished(deps: Pick<WorkerDeps, 'onJobFinished' | 'logger'>, finished: Finished | null, tenantId: string): void {
  if (!finished) return;
  const { job } = finished;
  try {
    deps.onJobFinished?.({
      jobId: job.id,
      conversationId: job.conversationId,
      tenantId,
      status: job.status,
      trigger: job.trigger,
      result: job.result ?? null,
      error: job.error ?? null,
      deliveryId: finished.deliveryId,
    });
  } catch (error) {
    deps.logger.warn({ err: error, jobId: job.id }, 'job observer failed');
  }
}

/**
 * Postgres is the source of truth: the last step error is visible on the job row, and when a
 * plan or finalize step fails for good the job fails (nothing was committed: the commit is
 * one transaction). A failed summarize step is left to finalize, which applies the policy.
 * The row (and so the API and the webhook) gets a stable code and a short message
 * (lib/public-error.ts); the SQL, the driver's message and the stack are in the log line the
 * caller wrote for the failure.
 */
export async function recordStepError(
  deps: Pick<WorkerDeps, 'db' | 'logger' | 'onJobFinished'>,
  jobId: unknown,
  error: unknown,
  failJob: boolean,
): Promise<void> {
  if (typeof jobId !== 'string') return;
  const detail = publicError(error);
  try {
    const row = failJob ? await getJob(deps.db, jobId) : null;
    if (row) {
      const finished = await finishJob(deps.db, row, 'failed', { error: detail, pauseAutoUntilSeq: row.watermark });
      notifyFinished(deps, finished, finished?.job.tenantId ?? '');
      if (finished) return;
    }
    await recordJobError(deps.db, jobId, detail);
  } catch (writeError) {
    deps.logger.error({ err: writeError, jobId }, 'could not record the step error');
  }
}
