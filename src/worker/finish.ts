import type { JobRow } from '../db/repos/jobs.js';
import { transitionJob } from '../db/repos/jobs.js';
import { ACTIVE_JOB_STATUSES, conversations, type JobStatus } from '../db/schema.js';
import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../db/client.js';
import type { WorkerDeps } from './deps.js';

/**
 * Terminal transitions of a job. Only an active job can finish, so a late step of a
 * cancelled job never overwrites its status.
 */
export async function finishJob(
  db: DbOrTx,
  job: Pick<JobRow, 'id' | 'conversationId' | 'trigger'>,
  status: Extract<JobStatus, 'failed' | 'noop'>,
  detail: { result?: Record<string, unknown>; error?: { code: string; message: string }; pauseAutoUntilSeq?: number | null },
): Promise<JobRow | null> {
  const row = await transitionJob(db, job.id, ACTIVE_JOB_STATUSES, {
    status,
    finishedAt: new Date(),
    ...(detail.result ? { result: detail.result } : {}),
    ...(detail.error ? { error: detail.error } : {}),
  });
  // SPEC §5.1/§5.6a: after a failed or insufficient auto attempt, no new auto attempt until new messages arrive.
  if (row && job.trigger !== 'api' && job.trigger !== 'tool' && detail.pauseAutoUntilSeq != null) {
    await db.update(conversations).set({ autoPausedUntilSeq: detail.pauseAutoUntilSeq }).where(eq(conversations.id, job.conversationId));
  }
  return row;
}

export function notifyFinished(deps: Pick<WorkerDeps, 'onJobFinished' | 'logger'>, job: JobRow | null, tenantId: string): void {
  if (!job) return;
  try {
    deps.onJobFinished?.({
      jobId: job.id,
      conversationId: job.conversationId,
      tenantId,
      status: job.status,
      trigger: job.trigger,
      result: job.result ?? null,
      error: job.error ?? null,
    });
  } catch (error) {
    deps.logger.warn({ err: error, jobId: job.id }, 'job observer failed');
  }
}
