import { publicStoredError } from '../../lib/public-error.js';
import type { JobRow } from './jobs.js';

/**
 * A job as the API shows it (`GET /v1/jobs/:id`) and as its webhook events carry it in
 * `data.job`: one mapping, so the response and the event cannot drift apart. An error recorded
 * before errors were made public (a SQLSTATE for a code, a failed query's SQL for a message)
 * is shown as its public code and message; the row keeps what it holds.
 */
export function publicJob(row: JobRow, conversationExternalId: string) {
  return {
    id: row.id,
    conversationId: conversationExternalId,
    status: row.status,
    trigger: row.trigger,
    options: row.options,
    progress: row.progress,
    result: row.result ?? null,
    error: row.error ? publicStoredError(row.error) : null,
    createdAt: row.createdAt.toISOString(),
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}
