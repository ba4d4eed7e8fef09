import type { JobsOptions } from 'bullmq';
import { z } from 'zod';

import { type QueueName, QUEUES } from './names.js';

/**
 * The one place where every job gets its name, payload schema, queue and default options
 * (trigger.dev's workerCatalog). BullMQ job ids derive from `compaction_jobs.id`, so a
 * duplicate enqueue of the same step is a no-op in Redis and processors stay idempotent.
 */

export const PlanPayloadSchema = z.object({ jobId: z.uuid() });
export const SummarizeChunkPayloadSchema = z.object({ jobId: z.uuid(), chunkIndex: z.number().int().min(0) });
export const FinalizePayloadSchema = z.object({ jobId: z.uuid() });
export const ReconcilePayloadSchema = z.object({});
export const IdleCheckPayloadSchema = z.object({ conversationId: z.uuid() });
export const DeliverWebhookPayloadSchema = z.object({ deliveryId: z.uuid() });

export type PlanPayload = z.infer<typeof PlanPayloadSchema>;
export type SummarizeChunkPayload = z.infer<typeof SummarizeChunkPayloadSchema>;
export type FinalizePayload = z.infer<typeof FinalizePayloadSchema>;
export type IdleCheckPayload = z.infer<typeof IdleCheckPayloadSchema>;
export type DeliverWebhookPayload = z.infer<typeof DeliverWebhookPayloadSchema>;

const retention = { removeOnComplete: { age: 3_600, count: 10_000 }, removeOnFail: { age: 7 * 24 * 3_600 } } as const;

export const JOBS = {
  plan: {
    name: 'plan',
    queue: QUEUES.compaction,
    schema: PlanPayloadSchema,
    options: { attempts: 5, backoff: { type: 'exponential', delay: 1_000 }, ...retention } satisfies JobsOptions,
    jobId: (p: PlanPayload) => p.jobId,
  },
  summarizeChunk: {
    name: 'summarize-chunk',
    queue: QUEUES.summarize,
    schema: SummarizeChunkPayloadSchema,
    // The LLM retry layer already retried transient errors; BullMQ attempts cover crashes.
    // A child that fails for good must not hold its parent: finalize decides what to do.
    options: {
      attempts: 3,
      backoff: { type: 'exponential', delay: 2_000 },
      ignoreDependencyOnFailure: true,
      ...retention,
    } satisfies JobsOptions,
    jobId: (p: SummarizeChunkPayload) => `${p.jobId}-chunk-${p.chunkIndex}`,
  },
  finalize: {
    name: 'finalize',
    queue: QUEUES.compaction,
    schema: FinalizePayloadSchema,
    options: { attempts: 5, backoff: { type: 'exponential', delay: 1_000 }, ...retention } satisfies JobsOptions,
    jobId: (p: FinalizePayload) => `${p.jobId}-finalize`,
  },
  reconcile: {
    name: 'reconcile',
    queue: QUEUES.maintenance,
    schema: ReconcilePayloadSchema,
    options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 100 } } satisfies JobsOptions,
  },
  /**
   * `schedule: idle` (SPEC §5.1): one delayed check per conversation, debounced by its
   * deduplication id so each append pushes it back (see queue/idle.ts). DB-bound and fast.
   */
  idleCheck: {
    name: 'idle-check',
    queue: QUEUES.compaction,
    schema: IdleCheckPayloadSchema,
    options: {
      attempts: 3,
      backoff: { type: 'exponential', delay: 1_000 },
      removeOnComplete: true,
      removeOnFail: { count: 1_000 },
    } satisfies JobsOptions,
    deduplicationId: (p: IdleCheckPayload) => `idle-${p.conversationId}`,
  },
  /** One webhook delivery; attempts and backoff come from the configuration at enqueue time. */
  deliverWebhook: {
    name: 'deliver-webhook',
    queue: QUEUES.webhooks,
    schema: DeliverWebhookPayloadSchema,
    options: { attempts: 10, backoff: { type: 'exponential', delay: 5_000 }, ...retention } satisfies JobsOptions,
    jobId: (p: DeliverWebhookPayload) => p.deliveryId,
  },
} as const;

export type JobName = (typeof JOBS)[keyof typeof JOBS]['name'];

/** Job definitions of one queue, by job name (for the worker's dispatcher). */
export function jobsOfQueue(queue: QueueName) {
  return Object.values(JOBS).filter((job) => job.queue === queue);
}
