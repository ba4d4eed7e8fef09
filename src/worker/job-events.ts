import { recordJobOutcome } from '../obs/metrics.js';
import { enqueueWebhookDelivery } from '../queue/webhooks.js';
import type { JobFinishedEvent, WorkerDeps } from './deps.js';

export interface JobEvents {
  /** the `onJobFinished` observer: metrics at once, the webhook delivery enqueued in the background */
  onJobFinished(event: JobFinishedEvent): void;
  /** resolves when every enqueue started so far has settled (shutdown waits on it) */
  drain(): Promise<void>;
}

/**
 * What happens after a job reached a terminal status (SPEC §5.5 step 3): metrics, and the
 * enqueue of the webhook delivery its transaction recorded (the outbox, db/repos/job-outbox.ts).
 * An enqueue that fails is left to the delivery sweep, which sends pending rows Redis never got.
 */
export function createJobEvents(deps: Pick<WorkerDeps, 'logger' | 'metrics' | 'webhooks'>): JobEvents {
  const pending = new Set<Promise<void>>();
  return {
    onJobFinished(event) {
      if (deps.metrics) recordJobOutcome(deps.metrics, event);
      const webhooks = deps.webhooks;
      if (!event.deliveryId || !webhooks) return;
      const ids = { jobId: event.jobId, tenantId: event.tenantId, deliveryId: event.deliveryId };
      const task = enqueueWebhookDelivery(webhooks.queue, event.deliveryId, webhooks).then(
        () => deps.logger.info(ids, 'webhook event enqueued'),
        (error: unknown) => deps.logger.warn({ ...ids, err: error }, 'webhook enqueue failed; the delivery sweep will retry'),
      );
      pending.add(task);
      void task.finally(() => pending.delete(task));
    },
    async drain() {
      await Promise.allSettled([...pending]);
    },
  };
}
