import { AppError } from '../lib/errors.js';

/** The planned messages changed under the job (e.g. a revert): the plan can no longer be applied. */
export const staleSnapshot = (jobId: string, missing: number): AppError =>
  new AppError('STALE_SNAPSHOT', `job ${jobId}: ${missing} planned message(s) are no longer active`, { status: 409, retryable: false });

/**
 * Planned messages were pinned after the plan was made (SPEC §5.6a): archiving or rewriting
 * them would break the pin, so the plan is stale like any other changed snapshot.
 */
export const pinnedSinceSnapshot = (jobId: string, pinned: number): AppError =>
  new AppError('STALE_SNAPSHOT', `job ${jobId}: ${pinned} planned message(s) were pinned after the plan was made`, {
    status: 409,
    retryable: false,
  });
