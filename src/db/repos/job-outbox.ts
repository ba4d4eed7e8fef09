import { eq } from 'drizzle-orm';

import type { DbOrTx } from '../client.js';
import { conversations, type WebhookEvent } from '../schema.js';
import { publicJob } from './job-view.js';
import type { JobRow } from './jobs.js';
import { recordWebhookEvent } from './webhooks.js';

/**
 * The outbox of job events (SPEC §5.5 step 3): a job's terminal event and its webhook
 * delivery row are written by the same transaction that records the status they report, so
 * a crash between the commit and the delivery loses nothing — the delivery sweep sends what
 * Redis never got.
 */

/** The event a terminal job status emits. */
export function jobEventType(status: string): WebhookEvent | null {
  switch (status) {
    case 'completed':
      return 'compaction.completed';
    case 'failed':
      return 'compaction.failed';
    case 'noop':
      return 'compaction.noop';
    case 'cancelled':
      return 'compaction.cancelled';
    default:
      return null;
  }
}

/** `data` of a compaction event: the job as `GET /v1/jobs/:id` shows it. */
export function jobEventData(job: JobRow, conversationExternalId: string): { job: ReturnType<typeof publicJob> } {
  return { job: publicJob(job, conversationExternalId) };
}

/**
 * Records the terminal event of `job` (as it stands in this transaction) for the webhook
 * that applies; returns the delivery id to enqueue after the commit, or null when no
 * webhook wants it.
 */
export async function recordJobEvent(tx: DbOrTx, job: JobRow): Promise<string | null> {
  const type = jobEventType(job.status);
  if (!type) return null;
  const [conversation] = await tx
    .select({ externalId: conversations.externalId })
    .from(conversations)
    .where(eq(conversations.id, job.conversationId));
  if (!conversation) return null;
  return recordWebhookEvent(tx, {
    tenantId: job.tenantId,
    conversationId: job.conversationId,
    conversationExternalId: conversation.externalId,
    type,
    data: jobEventData(job, conversation.externalId),
  });
}
