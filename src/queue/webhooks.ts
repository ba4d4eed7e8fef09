import { Queue } from 'bullmq';

import { JOBS } from './catalog.js';
import type { RedisConnection } from './connection.js';
import { queuePrefix, QUEUES } from './names.js';

/** Retry settings of webhook deliveries (COMPACTD_WEBHOOK_*). */
export interface WebhookRetry {
  attempts: number;
  /** first backoff; BullMQ doubles it after each failed attempt */
  backoffMs: number;
}

/** The `webhooks` queue over the producers' fail-fast connection (created by the composition root). */
export function createWebhookQueue(redis: RedisConnection, prefix: string): Queue {
  return new Queue(QUEUES.webhooks, { connection: redis, prefix: queuePrefix(prefix) });
}

/**
 * Enqueues one delivery; the BullMQ id is the delivery id, so enqueueing it twice (the API
 * after commit and the sweep for rows Redis lost) is a no-op.
 */
export async function enqueueWebhookDelivery(queue: Pick<Queue, 'add'>, deliveryId: string, retry: WebhookRetry): Promise<void> {
  const payload = JOBS.deliverWebhook.schema.parse({ deliveryId });
  await queue.add(JOBS.deliverWebhook.name, payload, {
    ...JOBS.deliverWebhook.options,
    jobId: JOBS.deliverWebhook.jobId(payload),
    attempts: retry.attempts,
    backoff: { type: 'exponential', delay: retry.backoffMs },
  });
}

/** State of a delivery's job in Redis ('missing' when Redis no longer holds it), for the sweep. */
export async function deliveryJobState(queue: Pick<Queue, 'getJob'>, deliveryId: string): Promise<string> {
  const job = await queue.getJob(deliveryId);
  return job ? await job.getState() : 'missing';
}
