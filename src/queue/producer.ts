import { FlowProducer, Queue } from 'bullmq';

import { JOBS } from './catalog.js';
import type { RedisConnection } from './connection.js';
import { fairPriorities, fairPriority, MAX_PRIORITY } from './fair-share.js';
import { cancelChannel, queuePrefix, QUEUES } from './names.js';

export interface Queues {
  compaction: Queue;
  summarize: Queue;
  maintenance: Queue;
  flow: FlowProducer;
  redis: RedisConnection;
  prefix: string;
}

/** Producers over one fail-fast connection (created by the composition root). */
export function createQueues(redis: RedisConnection, prefix: string): Queues {
  const options = { connection: redis, prefix: queuePrefix(prefix) };
  return {
    compaction: new Queue(QUEUES.compaction, options),
    summarize: new Queue(QUEUES.summarize, options),
    maintenance: new Queue(QUEUES.maintenance, options),
    flow: new FlowProducer(options),
    redis,
    prefix,
  };
}

export async function closeQueues(queues: Queues): Promise<void> {
  await Promise.allSettled([queues.compaction.close(), queues.summarize.close(), queues.maintenance.close(), queues.flow.close()]);
}

/** A compaction job as the queue needs it: its id, and its tenant for the fair share. */
export interface QueuedJobRef {
  id: string;
  tenantId: string;
}

/**
 * Enqueues the plan step of a compaction job (idempotent: the BullMQ id is the job id), in
 * its tenant's fair turn (queue/fair-share.ts).
 */
export async function enqueueCompaction(
  queues: Pick<Queues, 'compaction' | 'redis' | 'prefix'>,
  job: QueuedJobRef,
  delayMs = 0,
): Promise<void> {
  const payload = JOBS.plan.schema.parse({ jobId: job.id });
  // The fair share's script runs on the queue's own connection: wait until it is up, as `add` would.
  await queues.compaction.waitUntilReady();
  const priority = await fairPriority(queues, QUEUES.compaction, job.tenantId);
  await queues.compaction.add(JOBS.plan.name, payload, {
    ...JOBS.plan.options,
    jobId: JOBS.plan.jobId(payload),
    priority,
    ...(delayMs > 0 ? { delay: delayMs } : {}),
  });
}

/**
 * Fans out one summarize step per chunk under a finalize parent, atomically (a BullMQ
 * flow). With no chunks (mask-only plans), finalize is enqueued alone. Every step takes its
 * tenant's fair turn in its queue: one tenant's many chunks interleave with another's.
 */
export async function enqueueSummarizeFlow(
  queues: Pick<Queues, 'compaction' | 'flow' | 'prefix' | 'redis'>,
  job: QueuedJobRef,
  chunkCount: number,
): Promise<void> {
  const finalize = JOBS.finalize.schema.parse({ jobId: job.id });
  await queues.compaction.waitUntilReady();
  const finalizePriority = await fairPriority(queues, QUEUES.compaction, job.tenantId);
  const finalizeOptions = { ...JOBS.finalize.options, jobId: JOBS.finalize.jobId(finalize), priority: finalizePriority };
  if (chunkCount === 0) {
    await queues.compaction.add(JOBS.finalize.name, finalize, finalizeOptions);
    return;
  }
  const chunkPriorities = await fairPriorities(queues, QUEUES.summarize, job.tenantId, chunkCount);
  await queues.flow.add({
    name: JOBS.finalize.name,
    queueName: JOBS.finalize.queue,
    data: finalize,
    opts: finalizeOptions,
    children: Array.from({ length: chunkCount }, (_, chunkIndex) => {
      const payload = JOBS.summarizeChunk.schema.parse({ jobId: job.id, chunkIndex });
      return {
        name: JOBS.summarizeChunk.name,
        queueName: JOBS.summarizeChunk.queue,
        data: payload,
        opts: {
          ...JOBS.summarizeChunk.options,
          jobId: JOBS.summarizeChunk.jobId(payload),
          priority: chunkPriorities[chunkIndex] ?? MAX_PRIORITY,
        },
      };
    }),
  });
}

/** Tells every worker process to abort in-flight LLM calls of this compaction job. */
export async function publishCancel(queues: Pick<Queues, 'redis' | 'prefix'>, jobId: string): Promise<void> {
  await queues.redis.publish(cancelChannel(queues.prefix), jobId);
}

/** Whether Redis still holds any step of the job (for the reconciler). */
export async function hasQueuedStep(queues: Pick<Queues, 'compaction'>, jobId: string): Promise<boolean> {
  const ids = [JOBS.plan.jobId({ jobId }), JOBS.finalize.jobId({ jobId })];
  for (const id of ids) {
    const job = await queues.compaction.getJob(id);
    if (!job) continue;
    const state = await job.getState();
    if (state !== 'completed' && state !== 'failed' && state !== 'unknown') return true;
  }
  return false;
}
