import { randomUUID } from 'node:crypto';

import type { Db, Sql } from '../db/client.js';
import { type JobStatusHandlers, type JobStatusSubscription, pingJobStatusChannel, subscribeJobStatus } from '../db/job-status-channel.js';
import { getJobsByIds, type JobWithConversation } from '../db/repos/jobs.js';
import { ACTIVE_JOB_STATUSES, type JobStatus } from '../db/schema.js';
import { AppError } from '../lib/errors.js';
import type { Logger } from '../obs/logger.js';

/**
 * Long-polls that cost nothing while they wait. Every waiter of the process hangs on one
 * subscription to the jobs' status channel (a trigger announces each change, whoever makes
 * it); a change to a terminal status costs one read of that job, shared by all its waiters.
 * Each waiter holds one timer (its deadline) and no connection. Arriving costs little too: the
 * waiters of a job that arrive together share its first read (a burst of 2000 long-polls sent
 * one read each, 2000 statements queued on the pool ahead of every other request for seconds).
 *
 * Nothing is lost between a waiter's read and the notification: the subscription is in place
 * before the waiter reads the row. If the subscription is lost (Postgres restart), a sweep
 * every `resyncEveryMs` re-reads every watched job in one query and a heartbeat through the
 * channel detects the loss and subscribes again; a waiter's deadline never depends on either.
 */

export type WaitedJob = JobWithConversation;

export interface JobWaitersDeps {
  readJobs(jobIds: readonly string[]): Promise<WaitedJob[]>;
  subscribe(handlers: JobStatusHandlers): Promise<JobStatusSubscription>;
  ping(nonce: string): Promise<void>;
  logger: Pick<Logger, 'warn'>;
  /** open waiters per tenant in this process; the next one is a 429 */
  maxWaitersPerTenant: number;
  /** the safety sweep and heartbeat period while any waiter is open */
  resyncEveryMs?: number;
}

export interface WaitParams {
  tenantId: string;
  jobId: string;
  waitMs: number;
  /** aborted when the client goes away: the waiter is dropped at once */
  signal: AbortSignal;
}

export interface JobWaiters {
  /** The job once terminal, or as it is at the deadline; null when it does not exist (for this tenant) or went away. */
  wait(params: WaitParams): Promise<WaitedJob | null>;
  /** open waiters (all tenants) */
  size(): number;
  /** Answers every open waiter with the job as it is now and drops the subscription. */
  close(): Promise<void>;
}

const DEFAULT_RESYNC_EVERY_MS = 5_000;
const RETRY_AFTER_MS = 2_000;
/** waiters answered per turn of the event loop */
const SETTLE_SLICE = 50;

const noop = () => undefined;

const isActive = (status: JobStatus | 'deleted') => (ACTIVE_JOB_STATUSES as readonly string[]).includes(status);

interface Waiter {
  tenantId: string;
  settle(row: WaitedJob | null): void;
  fail(error: unknown): void;
}

export function createJobWaiters(deps: JobWaitersDeps): JobWaiters {
  const resyncEveryMs = deps.resyncEveryMs ?? DEFAULT_RESYNC_EVERY_MS;
  const byJob = new Map<string, Set<Waiter>>();
  const perTenant = new Map<string, number>();
  /** per job: the read in flight, and the one queued behind it for whoever asks meanwhile */
  const reads = new Map<string, { done: Promise<void>; queued: Promise<WaitedJob | null> | null }>();
  let subscription: Promise<JobStatusSubscription | null> | null = null;
  let sweepTimer: NodeJS.Timeout | null = null;
  let unansweredPing: string | null = null;
  let waiterCount = 0;

  const handlers: JobStatusHandlers = {
    onChange: (jobId, status) => {
      if (byJob.has(jobId) && !isActive(status)) wakeJob(jobId);
    },
    onPing: (nonce) => {
      if (nonce === unansweredPing) unansweredPing = null;
    },
    // after a reconnect: changes made while the LISTEN was down were never announced
    onListen: () => void sweep(),
  };

  function subscribe(): Promise<JobStatusSubscription | null> {
    subscription ??= deps.subscribe(handlers).catch((error: unknown) => {
      deps.logger.warn({ err: error }, 'job status subscription failed; long-polls fall back to the periodic sweep');
      subscription = null;
      return null;
    });
    return subscription;
  }

  function resubscribe(): void {
    const old = subscription;
    subscription = null;
    void old?.then((sub) => sub?.close()).catch(() => undefined);
    void subscribe();
  }

  function startRead(jobId: string): Promise<WaitedJob | null> {
    const read = deps.readJobs([jobId]).then((rows) => rows[0] ?? null);
    const slot = { done: read.then(noop, noop), queued: null as Promise<WaitedJob | null> | null };
    reads.set(jobId, slot);
    void slot.done.then(() => {
      if (reads.get(jobId) === slot && slot.queued === null) reads.delete(jobId);
    });
    return read;
  }

  /**
   * The job as read by a statement that starts after this call, shared with every caller for
   * that job meanwhile: at most one read of a job in flight and one queued, whatever the number
   * of its waiters. Never the read already in flight: it may predate the change (or the waiter's
   * subscription) the caller must see.
   */
  function readFresh(jobId: string): Promise<WaitedJob | null> {
    const slot = reads.get(jobId);
    if (!slot) return startRead(jobId);
    slot.queued ??= slot.done.then(() => startRead(jobId));
    return slot.queued;
  }

  /**
   * Answers the job's waiters when it is terminal or gone; an active job keeps them waiting.
   * A slice at a time, the event loop free between slices: answering 2000 waiters in one go
   * held every other request of the process for ~2 s.
   */
  function deliver(jobId: string, row: WaitedJob | null): void {
    if (row && isActive(row.status)) return;
    settleInSlices([...(byJob.get(jobId) ?? [])], row);
  }

  function settleInSlices(waiting: readonly Waiter[], row: WaitedJob | null, from = 0): void {
    const until = Math.min(waiting.length, from + SETTLE_SLICE);
    for (let i = from; i < until; i++) waiting[i]!.settle(row);
    if (until < waiting.length) setImmediate(() => settleInSlices(waiting, row, until));
  }

  function wakeJob(jobId: string): void {
    readFresh(jobId).then(
      (row) => deliver(jobId, row),
      (error: unknown) => deps.logger.warn({ err: error, jobId }, 'long-poll wake-up read failed; the sweep retries'),
    );
  }

  async function sweep(): Promise<void> {
    if (byJob.size === 0) return;
    const ids = [...byJob.keys()];
    try {
      const rows = new Map((await deps.readJobs(ids)).map((row) => [row.id, row]));
      for (const id of ids) deliver(id, rows.get(id) ?? null);
    } catch (error) {
      deps.logger.warn({ err: error }, 'long-poll sweep failed; waiters still end at their deadline');
    }
  }

  function tick(): void {
    // The previous heartbeat never came back: the LISTEN is gone (or Postgres is), subscribe again.
    if (unansweredPing !== null || subscription === null) resubscribe();
    const nonce = randomUUID();
    unansweredPing = nonce;
    deps.ping(nonce).catch(() => undefined);
    void sweep();
  }

  function add(jobId: string, waiter: Waiter): void {
    const set = byJob.get(jobId) ?? new Set();
    set.add(waiter);
    byJob.set(jobId, set);
    if (!sweepTimer) {
      sweepTimer = setInterval(tick, resyncEveryMs);
      sweepTimer.unref();
    }
  }

  function remove(jobId: string, waiter: Waiter): void {
    const set = byJob.get(jobId);
    set?.delete(waiter);
    if (set?.size === 0) byJob.delete(jobId);
    if (byJob.size === 0 && sweepTimer) {
      clearInterval(sweepTimer);
      sweepTimer = null;
      unansweredPing = null;
    }
  }

  function reserve(tenantId: string): () => void {
    const open = perTenant.get(tenantId) ?? 0;
    if (open >= deps.maxWaitersPerTenant) {
      throw new AppError(
        'TOO_MANY_WAITERS',
        `this tenant already has ${deps.maxWaitersPerTenant} long-polls open; retry later, or read the job without wait`,
        { status: 429, retryable: true, retryAfterMs: RETRY_AFTER_MS },
      );
    }
    perTenant.set(tenantId, open + 1);
    waiterCount++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      waiterCount--;
      const left = (perTenant.get(tenantId) ?? 1) - 1;
      if (left === 0) perTenant.delete(tenantId);
      else perTenant.set(tenantId, left);
    };
  }

  async function wait({ tenantId, jobId, waitMs, signal }: WaitParams): Promise<WaitedJob | null> {
    const release = reserve(tenantId);
    try {
      // Listening before the read below: a change that commits after that read is announced to us.
      await subscribe();
    } catch (error) {
      release();
      throw error;
    }
    return new Promise<WaitedJob | null>((resolve, reject) => {
      let done = false;
      const finish = (answer: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(deadline);
        signal.removeEventListener('abort', onAbort);
        remove(jobId, waiter);
        release();
        answer();
      };
      // Every path answers through here, and every read is shared by all the job's waiters
      // whatever their tenant (the first read, a wake-up, the sweep, the deadline, shutdown):
      // another tenant's job is not found, whichever read settles the waiter.
      const settle = (row: WaitedJob | null) => finish(() => resolve(row !== null && row.tenantId === tenantId ? row : null));
      const waiter: Waiter = { tenantId, settle, fail: (error) => finish(() => reject(error)) };
      const onAbort = () => waiter.settle(null);
      const deadline = setTimeout(() => readFresh(jobId).then((row) => waiter.settle(row), waiter.fail), waitMs);
      add(jobId, waiter);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      readFresh(jobId).then((row) => {
        // a job of another tenant is answered at once (as not found), not waited for
        if (!row || row.tenantId !== tenantId || !isActive(row.status)) waiter.settle(row);
      }, waiter.fail);
    });
  }

  async function close(): Promise<void> {
    if (sweepTimer) clearInterval(sweepTimer);
    sweepTimer = null;
    const ids = [...byJob.keys()];
    if (ids.length > 0) {
      // shutdown must not wait out a minute of long-polls: each gets the job as it is now
      const rows = await deps.readJobs(ids).catch(() => [] as WaitedJob[]);
      const found = new Map(rows.map((row) => [row.id, row]));
      for (const id of ids) for (const waiter of [...(byJob.get(id) ?? [])]) waiter.settle(found.get(id) ?? null);
    }
    const sub = await subscription;
    subscription = null;
    await sub?.close().catch(() => undefined);
  }

  return { wait, size: () => waiterCount, close };
}

/** The waiters over the API's pool and its Postgres connection options (the LISTEN gets a connection of its own). */
export function createJobWaitersFor(
  db: Db,
  sql: Sql,
  options: Pick<JobWaitersDeps, 'logger' | 'maxWaitersPerTenant' | 'resyncEveryMs'>,
): JobWaiters {
  return createJobWaiters({
    readJobs: (jobIds) => getJobsByIds(db, jobIds),
    subscribe: (handlers) => subscribeJobStatus(sql, handlers),
    ping: (nonce) => pingJobStatusChannel(sql, nonce),
    ...options,
  });
}
