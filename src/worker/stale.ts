import { AppError } from '../lib/errors.js';

/** The planned messages changed under the job (e.g. a revert): the plan can no longer be applied. */
export const staleSnapshot = (jobId: string, missing: number): AppError =>
  new AppError('STALE_SNAPSHOT', `job ${jobId}: ${missing} planned message(s) are no longer active`, { status: 409, retryable: false });
