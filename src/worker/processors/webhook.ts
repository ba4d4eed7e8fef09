import { failDelivery, getDeliveryWithEndpoint, listStalePendingDeliveries, recordDeliveryAttempt, touchDelivery } from '../../db/repos/webhooks.js';
import type { WebhookAttempt } from '../../db/schema.js';
import type { DeliverWebhookPayload } from '../../queue/catalog.js';
import { deliveryJobState, enqueueWebhookDelivery } from '../../queue/webhooks.js';
import type { WebhookSettings, WorkerDeps } from '../deps.js';
import { webhookHeaders } from '../webhooks.js';

export type WebhookDeps = Pick<WorkerDeps, 'db' | 'logger' | 'metrics'> & { webhooks: WebhookSettings };

/** A non-2xx answer or a network error; BullMQ retries the delivery with backoff. */
export class WebhookDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookDeliveryError';
  }
}

/** Characters of an error kept in the delivery log. */
const MAX_ERROR_CHARS = 500;

/**
 * One attempt of one delivery: POST the stored body, signed, to the endpoint's current URL
 * with its current secret (so a rotated secret or a moved endpoint applies to retries).
 * 2xx marks it delivered; anything else is logged on the row and thrown for a retry, and
 * the final attempt marks it failed. Redirects are not followed: a receiver answers itself.
 */
export async function processWebhookDelivery(payload: DeliverWebhookPayload, deps: WebhookDeps, attempt: { final: boolean }): Promise<void> {
  const found = await getDeliveryWithEndpoint(deps.db, payload.deliveryId);
  if (!found || found.delivery.status !== 'pending') return;
  const { delivery, endpoint } = found;
  const log = deps.logger.child({ deliveryId: delivery.id, event: delivery.event, tenantId: delivery.tenantId, conversationId: found.conversationExternalId });
  if (!endpoint?.enabled) {
    await failDelivery(deps.db, delivery.id, endpoint ? 'endpoint disabled' : 'endpoint removed');
    deps.metrics?.webhookDeliveries.inc({ event: delivery.event, outcome: 'failed' });
    log.info('webhook delivery dropped: its endpoint is gone or disabled');
    return;
  }

  const startedAt = Date.now();
  const sent = await post(endpoint.url, webhookHeaders(delivery, endpoint.secret, delivery.body, startedAt), delivery.body, deps.webhooks);
  const record: WebhookAttempt = { at: new Date(startedAt).toISOString(), statusCode: sent.statusCode, error: sent.error, durationMs: Date.now() - startedAt };
  const ok = sent.statusCode !== null && sent.statusCode >= 200 && sent.statusCode < 300;
  const status = ok ? 'delivered' : attempt.final ? 'failed' : 'pending';
  await recordDeliveryAttempt(deps.db, delivery.id, { attempt: record, status, url: endpoint.url });
  deps.metrics?.webhookDeliveries.inc({ event: delivery.event, outcome: ok ? 'delivered' : attempt.final ? 'failed' : 'retry' });
  if (ok) {
    log.info({ statusCode: sent.statusCode, durationMs: record.durationMs }, 'webhook delivered');
    return;
  }
  log.warn({ statusCode: sent.statusCode, error: sent.error, final: attempt.final }, attempt.final ? 'webhook delivery failed for good' : 'webhook delivery failed; will retry');
  if (!attempt.final) throw new WebhookDeliveryError(sent.error ?? `HTTP ${sent.statusCode}`);
}

async function post(url: string, headers: Record<string, string>, body: string, settings: WebhookSettings) {
  const doFetch = settings.fetch ?? globalThis.fetch;
  try {
    const response = await doFetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(settings.timeoutMs) });
    // The answer's body is not needed; release the connection without reading it.
    await response.body?.cancel().catch(() => undefined);
    const ok = response.status >= 200 && response.status < 300;
    return { statusCode: response.status, error: ok ? null : `HTTP ${response.status}` };
  } catch (error) {
    const message = error instanceof Error ? (error.name === 'TimeoutError' ? `timed out after ${settings.timeoutMs} ms` : describe(error)) : String(error);
    return { statusCode: null, error: message.slice(0, MAX_ERROR_CHARS) };
  }
}

/** fetch wraps network errors as "fetch failed" with the reason in `cause`. */
function describe(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
}

/** Pending deliveries untouched this long are checked against Redis by the sweep. */
export const DELIVERY_SWEEP_IDLE_MS = 60_000;

/**
 * Postgres holds the delivery log; Redis only carries the work. A pending delivery whose job
 * Redis lost (flush, enqueue refused after the row committed) is enqueued again; one whose
 * job failed for good without recording it (a crash on the last attempt) is marked failed.
 */
export async function sweepWebhookDeliveries(deps: WebhookDeps, idleMs = DELIVERY_SWEEP_IDLE_MS): Promise<number> {
  const { queue } = deps.webhooks;
  let requeued = 0;
  for (const { id } of await listStalePendingDeliveries(deps.db, idleMs)) {
    const state = await deliveryJobState(queue, id);
    if (state === 'failed') {
      await failDelivery(deps.db, id, 'gave up after the last attempt');
      continue;
    }
    if (state !== 'missing' && state !== 'completed' && state !== 'unknown') {
      await touchDelivery(deps.db, id);
      continue;
    }
    // A finished job keeps its id in Redis; remove it so the same id can be added again.
    if (state !== 'missing') await queue.remove(id).catch(() => 0);
    await enqueueWebhookDelivery(queue, id, deps.webhooks);
    await touchDelivery(deps.db, id);
    requeued += 1;
    deps.logger.warn({ deliveryId: id, state }, 'delivery sweep re-enqueued a webhook delivery missing from Redis');
  }
  return requeued;
}
