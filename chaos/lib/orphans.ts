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
}

export interface StepFate {
  step: ActiveStep;
  /** ms from the kill until another worker had the step; null if not within the bound */
  resumedAfterMs: number | null;
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
          })),
      );
    },
    async resumption(steps, killedAt, timeoutMs) {
      const pending = new Map(steps.map((s) => [`${s.queue}/${s.id}`, s]));
      const out: StepFate[] = [];
      const deadline = Date.now() + timeoutMs;
      while (pending.size > 0 && Date.now() < deadline) {
        for (const [key, step] of pending) {
          const job = await queueOf(step.queue).getJob(step.id);
          if (job?.processedOn !== undefined && job.processedOn > step.processedOn) {
            out.push({ step, resumedAfterMs: job.processedOn - killedAt });
            pending.delete(key);
          }
        }
        if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      for (const step of pending.values()) out.push({ step, resumedAfterMs: null });
      return out;
    },
    async close() {
      await Promise.allSettled(queues.map((q) => q.close()));
      connection.disconnect();
    },
  };
}
