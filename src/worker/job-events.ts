import { getConversationById } from '../db/repos/conversations.js';
import { getJob } from '../db/repos/jobs.js';
import { recordWebhookEvent } from '../db/repos/webhooks.js';
import { recordJobOutcome } from '../obs/metrics.js';
import { enqueueWebhookDelivery } from '../queue/webhooks.js';
import type { JobFinishedEvent, WorkerDeps } from './deps.js';
import { jobEventData, jobEventType } from './webhooks.js';

export interface JobEvents {
  /** the `onJobFinished` observer: metrics at once, the webhook in the background */
  onJobFinished(event: JobFinishedEvent): void;
  /** resolves when every webhook recording started so far has settled (shutdown waits on it) */
  drain(): Promise<void>;
}

/**
 * What happens when a compaction job reaches a terminal status, besides the status itself
 * (SPEC §5.5 step 3): metrics, and a webhook event recorded in Postgres then enqueued.
 * Recording runs after the job's own commit, so a failure here never fails the job; it
 * is logged with the job's ids.
 */
export function createJobEvents(deps: Pick<WorkerDeps, 'db' | 'logger' | 'metrics' | 'webhooks'>): JobEvents {
  const pending = new Set<Promise<void>>();
  return {
    onJobFinished(event) {
      if (deps.metrics) recordJobOutcome(deps.metrics, event);
      const type = jobEventType(event.status);
      if (!type || !deps.webhooks) return;
      const task = recordJobWebhook(deps, event, type).catch((error: unknown) =>
        // the event carries the internal conversation id, not the client's: named apart so `conversationId` keeps one meaning
        deps.logger.error({ err: error, jobId: event.jobId, conversationUuid: event.conversationId, tenantId: event.tenantId }, 'could not record the webhook event'),
      );
      pending.add(task);
      void task.finally(() => pending.delete(task));
    },
    async drain() {
      await Promise.allSettled([...pending]);
    },
  };
}

async function recordJobWebhook(
  deps: Pick<WorkerDeps, 'db' | 'logger' | 'webhooks'>,
  event: JobFinishedEvent,
  type: NonNullable<ReturnType<typeof jobEventType>>,
): Promise<void> {
  const webhooks = deps.webhooks;
  if (!webhooks) return;
  const [job, conversation] = await Promise.all([getJob(deps.db, event.jobId), getConversationById(deps.db, event.conversationId)]);
  if (!job || !conversation) return;
  const deliveryId = await recordWebhookEvent(deps.db, {
    tenantId: event.tenantId,
    conversationId: conversation.id,
    conversationExternalId: conversation.externalId,
    type,
    data: jobEventData(job, conversation.externalId),
  });
  if (!deliveryId) return;
  const ids = { jobId: job.id, conversationId: conversation.externalId, tenantId: job.tenantId, deliveryId, event: type };
  try {
    await enqueueWebhookDelivery(webhooks.queue, deliveryId, webhooks);
    deps.logger.info(ids, 'webhook event recorded');
  } catch (error) {
    // The row is committed: the delivery sweep enqueues it once Redis answers again.
    deps.logger.warn({ ...ids, err: error }, 'webhook enqueue failed; the delivery sweep will retry');
  }
}
