import { recordJobOutcome } from '../obs/metrics.js';
import { enqueueWebhookDelivery } from '../queue/webhooks.js';
import type { JobFinishedEvent, WorkerDeps } from './deps.js';

export interface JobEvents {
  /** the `onJobFinished` observer: metrics at once, the webhook delivery enqueued in the background */
  onJobFinished(event: JobFinishedEvent): void;
  /** resolves when every enqueue started so far has settled (shutdown waits on it) */
  drain(): Promise<void>;
}

export interface JobEventsOptions {
  /**
   * Fault injection (COMPACTD_FAULT_PAUSE_BEFORE_DISPATCH_MS; 0 in production): wait this long
   * between the commit and the enqueue, the window a crash test kills the worker in.
   */
  pauseBeforeDispatchMs?: number;
}

/**
 * What happens after a job reached a terminal status (SPEC §5.5 step 3): metrics, and the
 * enqueue of the webhook delivery its transaction recorded (the outbox, db/repos/job-outbox.ts).
 * An enqueue that fails, or never happens because the process died, is left to the delivery
 * sweep, which sends pending rows Redis never got.
 */
export function createJobEvents(deps: Pick<WorkerDeps, 'logger' | 'metrics' | 'webhooks'>, options: JobEventsOptions = {}): JobEvents {
  const pending = new Set<Promise<void>>();
  const pauseMs = options.pauseBeforeDispatchMs ?? 0;
  return {
    onJobFinished(event) {
      if (deps.metrics) recordJobOutcome(deps.metrics, event);
      const webhooks = deps.webhooks;
      if (!event.deliveryId || !webhooks) return;
      const deliveryId = event.deliveryId;
      const ids = { jobId: event.jobId, tenantId: event.tenantId, deliveryId };
      const dispatch = () =>
        enqueueWebhookDelivery(webhooks.queue, deliveryId, webhooks).then(
          () => deps.logger.info(ids, 'webhook event enqueued'),
          (error: unknown) => deps.logger.warn({ ...ids, err: error }, 'webhook enqueue failed; the delivery sweep will retry'),
        );
      const task = pauseMs > 0 ? faultPause(deps, ids, pauseMs).then(dispatch) : dispatch();
      pending.add(task);
      void task.finally(() => pending.delete(task));
    },
    async drain() {
      await Promise.allSettled([...pending]);
    },
  };
}

function faultPause(deps: Pick<WorkerDeps, 'logger'>, ids: Record<string, string>, ms: number): Promise<void> {
  deps.logger.warn({ ...ids, pauseMs: ms }, 'fault injection: pausing between the commit and the webhook dispatch');
  return new Promise((resolve) => setTimeout(resolve, ms));
}
