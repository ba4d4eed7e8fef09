import type postgres from 'postgres';

import type { JobStatus } from './schema.js';

/**
 * The Postgres channel on which migration 0007's trigger announces every change of a job's
 * status once it commits, whoever made it. One LISTEN per API process (postgres.js keeps it
 * on a dedicated connection, outside the pool) serves every long-poll of that process.
 */
export const JOB_STATUS_CHANNEL = 'compactd_job_status';

/** Heartbeats share the channel: a payload the trigger never sends (a job id is a UUID). */
const PING_PREFIX = 'ping:';

export interface JobStatusHandlers {
  /** a job moved to `status`, or its row was deleted */
  onChange(jobId: string, status: JobStatus | 'deleted'): void;
  /** a heartbeat sent with `pingJobStatusChannel` came back through the subscription */
  onPing(nonce: string): void;
  /** the LISTEN is (again) in place: changes made while it was not were not announced */
  onListen(): void;
}

export interface JobStatusSubscription {
  close(): Promise<void>;
}

function dispatch(payload: string, handlers: JobStatusHandlers): void {
  if (payload.startsWith(PING_PREFIX)) return handlers.onPing(payload.slice(PING_PREFIX.length));
  const colon = payload.indexOf(':');
  if (colon <= 0) return;
  handlers.onChange(payload.slice(0, colon), payload.slice(colon + 1) as JobStatus | 'deleted');
}

/** Resolves once listening; postgres.js re-listens after a lost connection and calls `onListen` again. */
export async function subscribeJobStatus(sql: postgres.Sql, handlers: JobStatusHandlers): Promise<JobStatusSubscription> {
  const request = await sql.listen(
    JOB_STATUS_CHANNEL,
    (payload) => dispatch(payload, handlers),
    () => handlers.onListen(),
  );
  return { close: () => request.unlisten() };
}

/**
 * Sends a heartbeat through the channel. postgres.js gives up re-listening when Postgres is
 * still down at its one retry, silently: a heartbeat that never comes back is how the
 * subscriber learns that and subscribes again.
 */
export async function pingJobStatusChannel(sql: postgres.Sql, nonce: string): Promise<void> {
  await sql`select pg_notify(${JOB_STATUS_CHANNEL}, ${PING_PREFIX + nonce})`;
}
