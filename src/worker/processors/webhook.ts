import {
  failDelivery,
  getDeliveryWithEndpoint,
  listStalePendingDeliveries,
  recordDeliveryAttempt,
  touchDelivery,
} from '../../db/repos/webhooks.js';
import type { WebhookAttempt } from '../../db/schema.js';
import { assertNever } from '../../lib/assert-never.js';
import type { DeliverWebhookPayload } from '../../queue/catalog.js';
import { deliveryJobState, enqueueWebhookDelivery } from '../../queue/webhooks.js';
import type { WebhookSettings, WorkerDeps } from '../deps.js';
import { type PostOutcome, postWebhook } from '../webhook-http.js';
import { webhookHeaders } from '../webhooks.js';

export type WebhookDeps = Pick<WorkerDeps, 'db' | 'logger' | 'metrics'> & { webhooks: WebhookSettings };

/** A non-2xx answer or a network error; BullMQ retries the delivery with backoff. */
export class WebhookDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookDeliveryError';
  }
}

/**
 * What the delivery log (which the tenant reads) says about an attempt: the receiver's status,
 * or a generic code. Never a connection error's text or an answer's body: those would tell the
 * tenant what listens where in the service's network. The operator's log has the details.
 */
export const DELIVERY_ERRORS = {
  /** no answer: DNS failure, refused or reset connection, timeout alike (telling them apart would map ports) */
  connectionFailed: 'connection_failed',
  targetRefused: 'target_not_allowed',
} as const;

/**
 * One attempt of one delivery: POST the stored body, signed, to the endpoint's current URL
 * with its current secret (so a rotated secret or a moved endpoint applies to retries).
 * 2xx marks it delivered; anything else is logged on the row and thrown for a retry, and
 * the final attempt marks it failed. A target the rules refuse (webhook-http.ts) fails at
 * once: retrying would not change the answer an operator has to change. Redirects are not
 * followed: a receiver answers itself.
 */
export async function processWebhookDelivery(
  payload: DeliverWebhookPayload,
  deps: WebhookDeps,
  attempt: { final: boolean },
): Promise<void> {
  const found = await getDeliveryWithEndpoint(deps.db, payload.deliveryId);
  if (!found || found.delivery.status !== 'pending') return;
  const { delivery, endpoint } = found;
  const log = deps.logger.child({
    deliveryId: delivery.id,
    event: delivery.event,
    tenantId: delivery.tenantId,
    conversationId: found.conversationExternalId,
  });
  if (!endpoint?.enabled) {
    await failDelivery(deps.db, delivery.id, endpoint ? 'endpoint disabled' : 'endpoint removed');
    deps.metrics?.webhookDeliveries.inc({ event: delivery.event, outcome: 'failed' });
    log.info('webhook delivery dropped: its endpoint is gone or disabled');
    return;
  }

  const startedAt = Date.now();
  const { webhooks } = deps;
  const options = {
    allow: webhooks.allow,
    timeoutMs: webhooks.timeoutMs,
    ...(webhooks.resolveHost ? { resolveHost: webhooks.resolveHost } : {}),
  };
  const outcome = await postWebhook(
    endpoint.url,
    webhookHeaders(delivery, endpoint.secret, delivery.body, startedAt),
    delivery.body,
    options,
  );
  const { statusCode, error } = logged(outcome);
  const record: WebhookAttempt = { at: new Date(startedAt).toISOString(), statusCode, error, durationMs: Date.now() - startedAt };
  const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
  const final = attempt.final || outcome.kind === 'refused';
  const status = ok ? 'delivered' : final ? 'failed' : 'pending';
  await recordDeliveryAttempt(deps.db, delivery.id, { attempt: record, status, url: endpoint.url });
  deps.metrics?.webhookDeliveries.inc({ event: delivery.event, outcome: ok ? 'delivered' : final ? 'failed' : 'retry' });
  if (ok) {
    log.info({ statusCode, durationMs: record.durationMs }, 'webhook delivered');
    return;
  }
  const detail =
    outcome.kind === 'refused' ? { refused: outcome.reason } : outcome.kind === 'no_answer' ? { cause: outcome.cause } : { statusCode };
  log.warn({ ...detail, final }, final ? 'webhook delivery failed for good' : 'webhook delivery failed; will retry');
  if (!final) throw new WebhookDeliveryError(error ?? `HTTP ${statusCode}`);
}

function logged(outcome: PostOutcome): { statusCode: number | null; error: string | null } {
  switch (outcome.kind) {
    case 'answered':
      return {
        statusCode: outcome.statusCode,
        error: outcome.statusCode >= 200 && outcome.statusCode < 300 ? null : `HTTP ${outcome.statusCode}`,
      };
    case 'refused':
      return { statusCode: null, error: DELIVERY_ERRORS.targetRefused };
    case 'no_answer':
      return { statusCode: null, error: DELIVERY_ERRORS.connectionFailed };
    default:
      return assertNever(outcome);
  }
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
