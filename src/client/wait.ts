import { CompactdError } from './errors.js';
import { isTerminal, type Job } from './types.js';

export interface WaitForJobOptions {
  /** give up after this long (default 10 minutes): throws CompactdError `TIMEOUT` */
  timeoutMs?: number;
  /**
   * Seconds each long-poll may hold (`GET /v1/jobs/:id?wait=S`, at most 60; default 30).
   * The service answers as soon as the job is terminal; a shorter poll only means more
   * frequent `onProgress` calls.
   */
  pollSeconds?: number;
  /** called with every job snapshot, the terminal one included */
  onProgress?: (job: Job) => void;
  signal?: AbortSignal;
}

export const DEFAULT_WAIT_TIMEOUT_MS = 10 * 60_000;
const MAX_POLL_SECONDS = 60;

/** Long-polls `getJob` until the job is terminal or the timeout passes. */
export async function waitForTerminalJob(
  getJob: (id: string, options: { waitSeconds: number; signal?: AbortSignal | undefined }) => Promise<Job>,
  id: string,
  options: WaitForJobOptions = {},
): Promise<Job> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
  const pollSeconds = Math.min(MAX_POLL_SECONDS, Math.max(0.1, options.pollSeconds ?? 30));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const remainingSeconds = Math.max(0, (deadline - Date.now()) / 1000);
    // Tenths of a second: the service accepts fractional waits, and a wait of 0 returns at once.
    const waitSeconds = Math.round(Math.min(pollSeconds, remainingSeconds) * 10) / 10;
    const job = await getJob(id, { waitSeconds, signal: options.signal });
    options.onProgress?.(job);
    if (isTerminal(job.status)) return job;
    if (Date.now() >= deadline) {
      throw new CompactdError({
        status: 0,
        code: 'TIMEOUT',
        title: 'Timeout',
        detail: `job ${id} still ${job.status} (${job.progress.chunksDone}/${job.progress.chunksTotal} chunks) after ${timeoutMs} ms`,
      });
    }
  }
}
