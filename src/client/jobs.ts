import { enc, type PostOptions, type RequestOptions, type Transport } from './transport.js';
import type { CompactionRequest, Job, JobPage } from './types.js';
import { type WaitForJobOptions, waitForTerminalJob } from './wait.js';

/** Compaction jobs: enqueue, watch, cancel, undo. */
export function jobMethods(t: Transport) {
  const methods = {
    /** `POST /v1/conversations/:id/compactions`: a new job (202) or the active one (200, `deduplicated: true`). */
    compact: (id: string, body: CompactionRequest = {}, opts: PostOptions = {}) =>
      t.post<Job>(`/v1/conversations/${enc(id)}/compactions`, body, opts),
    /** `GET /v1/jobs/:id`; `waitSeconds` long-polls up to that long for a terminal status. */
    getJob: (id: string, opts: RequestOptions & { waitSeconds?: number | undefined } = {}) =>
      t.get<Job>(
        `/v1/jobs/${enc(id)}`,
        { wait: opts.waitSeconds || undefined },
        { signal: opts.signal, extraTimeoutMs: (opts.waitSeconds ?? 0) * 1000 },
      ),
    /** Long-polls until the job is completed, noop, failed or cancelled. */
    waitForJob: (id: string, opts: WaitForJobOptions = {}) => waitForTerminalJob((jobId, o) => methods.getJob(jobId, o), id, opts),
    /** `DELETE /v1/jobs/:id`: cancels a job that has not started committing (`JOB_NOT_CANCELLABLE`, 409, after). */
    cancelJob: (id: string, opts: RequestOptions = {}) => t.deleteJson<Job>(`/v1/jobs/${enc(id)}`, opts),
    /** `POST /v1/jobs/:id/revert`: restores the originals of the conversation's latest compaction (409 otherwise). */
    revertJob: (id: string, opts: PostOptions = {}) => t.post<Job>(`/v1/jobs/${enc(id)}/revert`, {}, opts),
    /** `GET /v1/conversations/:id/jobs`: job history, newest first. */
    listJobs: (conversationId: string, query: { limit?: number; before?: string } = {}, opts: RequestOptions = {}) =>
      t.get<JobPage>(`/v1/conversations/${enc(conversationId)}/jobs`, query, opts),
  };
  return methods;
}
