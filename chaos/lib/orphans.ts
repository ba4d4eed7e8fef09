import { hostname } from 'node:os';

import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

import { queuePrefix, QUEUES } from '../../src/queue/names.js';

/**
 * Which queue steps a SIGKILL orphaned, and how long until another worker took them up.
 * Workers name themselves `host:pid` on every step they take (BullMQ `processedBy`), so the
 * steps a killed process held are exactly the active ones carrying its name; a step is
 * resumed when its `processedOn` moves past the kill.
 */

export interface ActiveStep {
  queue: string;
  id: string;
  name: string;
  jobId: string | null;
  processedOn: number;
  processedBy: string | null;
  stalledCounter: number;
}

export interface StepFate {
  step: ActiveStep;
  /** false when the step finished before the kill took effect (between the snapshot and the signal) */
  orphaned: boolean;
  /** ms from the kill until another worker had the step; null if not within the bound */
  resumedAfterMs: number | null;
  /** ms from the kill until the stall check put the step back in the queue (seen by polling, ±100 ms) */
  detectedAfterMs: number | null;
  /** the step's state when the bound passed without a resumption */
  stateAtBound?: string;
}

export interface QueueWatch {
  active(): Promise<ActiveStep[]>;
  /** waits (bounded) until every step is taken again after `killedAt` */
  resumption(steps: readonly ActiveStep[], killedAt: number, timeoutMs: number): Promise<StepFate[]>;
  close(): Promise<void>;
}

/** The `processedBy` name a worker child process gives itself (see start-worker.ts). */
export const workerName = (pid: number): string => `${hostname()}:${pid}`;

const WATCHED = [QUEUES.compaction, QUEUES.summarize] as const;

export function watchQueues(redisUrl: string, prefix: string): QueueWatch {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  connection.on('error', () => undefined);
  const queues = WATCHED.map((name) => new Queue(name, { connection, prefix: queuePrefix(prefix) }));
  const queueOf = (name: string) => queues[WATCHED.indexOf(name as (typeof WATCHED)[number])] as Queue;
  return {
    async active() {
      const lists = await Promise.all(queues.map((q) => q.getActive(0, 10_000)));
      return lists.flatMap((jobs, i) =>
        jobs
          .filter((job) => job.id !== undefined && job.processedOn !== undefined)
          .map((job) => ({
            queue: WATCHED[i] as string,
            id: job.id as string,
            name: job.name,
            jobId: typeof (job.data as { jobId?: unknown })?.jobId === 'string' ? (job.data as { jobId: string }).jobId : null,
            processedOn: job.processedOn as number,
            processedBy: job.processedBy ?? null,
            stalledCounter: job.stalledCounter ?? 0,
          })),
      );
    },
    async resumption(steps, killedAt, timeoutMs) {
      const pending = new Map(steps.map((s) => [`${s.queue}/${s.id}`, s]));
      const detected = new Map<string, number>();
      const out: StepFate[] = [];
      const deadline = Date.now() + timeoutMs;
      while (pending.size > 0 && Date.now() < deadline) {
        for (const [key, step] of pending) {
          const job = await queueOf(step.queue).getJob(step.id);
          if (job && (job.stalledCounter ?? 0) > step.stalledCounter && !detected.has(key)) detected.set(key, Date.now() - killedAt);
          if (job?.processedOn !== undefined && job.processedOn > step.processedOn) {
            out.push({ step, orphaned: true, resumedAfterMs: job.processedOn - killedAt, detectedAfterMs: detected.get(key) ?? null });
            pending.delete(key);
          } else if (job?.finishedOn !== undefined && job.processedOn === step.processedOn && job.finishedOn <= killedAt + 50) {
            // Finished by its worker in the moment between the snapshot and the signal.
            out.push({ step, orphaned: false, resumedAfterMs: null, detectedAfterMs: null });
            pending.delete(key);
          }
        }
        if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      for (const step of pending.values()) {
        const job = await queueOf(step.queue).getJob(step.id);
        const state = job ? await job.getState() : 'missing';
        out.push({
          step,
          orphaned: true,
          resumedAfterMs: null,
          detectedAfterMs: detected.get(`${step.queue}/${step.id}`) ?? null,
          stateAtBound: `${state}${job?.failedReason ? ` (${job.failedReason})` : ''}`,
        });
      }
      return out;
    },
    async close() {
      await Promise.allSettled(queues.map((q) => q.close()));
      connection.disconnect();
    },
  };
}
