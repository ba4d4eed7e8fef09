import { randomUUID } from 'node:crypto';

import { and, desc, eq, isNull, lt, or, type SQL, sql } from 'drizzle-orm';

import type { DbOrTx } from '../client.js';
import {
  conversations,
  type WebhookAttempt,
  webhookDeliveries,
  type WebhookDeliveryStatus,
  webhookEndpoints,
  type WebhookEvent,
} from '../schema.js';

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;

/** Scope of an endpoint: the tenant's (conversationId null) or one conversation's. */
export interface EndpointScope {
  tenantId: string;
  conversationId: string | null;
}

const scopeWhere = (scope: EndpointScope): SQL | undefined =>
  and(
    eq(webhookEndpoints.tenantId, scope.tenantId),
    scope.conversationId === null ? isNull(webhookEndpoints.conversationId) : eq(webhookEndpoints.conversationId, scope.conversationId),
  );

/** Creates or replaces the endpoint of a scope (the partial unique indexes keep one per scope). */
export async function upsertWebhookEndpoint(
  db: DbOrTx,
  params: EndpointScope & { url: string; secret: string; events: WebhookEvent[]; enabled: boolean },
): Promise<WebhookEndpointRow> {
  const set = { url: params.url, secret: params.secret, events: params.events, enabled: params.enabled, updatedAt: sql`now()` };
  const conflict =
    params.conversationId === null
      ? { target: webhookEndpoints.tenantId, targetWhere: sql`conversation_id is null` }
      : { target: webhookEndpoints.conversationId, targetWhere: sql`conversation_id is not null` };
  const [row] = await db
    .insert(webhookEndpoints)
    .values({
      tenantId: params.tenantId,
      conversationId: params.conversationId,
      url: params.url,
      secret: params.secret,
      events: params.events,
      enabled: params.enabled,
    })
    .onConflictDoUpdate({ ...conflict, set })
    .returning();
  if (!row) throw new Error('webhook endpoint upsert returned nothing');
  return row;
}

export async function getWebhookEndpoint(db: DbOrTx, scope: EndpointScope): Promise<WebhookEndpointRow | null> {
  const [row] = await db.select().from(webhookEndpoints).where(scopeWhere(scope));
  return row ?? null;
}

export async function deleteWebhookEndpoint(db: DbOrTx, scope: EndpointScope): Promise<boolean> {
  const rows = await db.delete(webhookEndpoints).where(scopeWhere(scope)).returning({ id: webhookEndpoints.id });
  return rows.length > 0;
}

/** The endpoint that receives a conversation's events: its own when it has one, else the tenant's. */
export async function resolveWebhookEndpoint(db: DbOrTx, tenantId: string, conversationId: string): Promise<WebhookEndpointRow | null> {
  const [row] = await db
    .select()
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.tenantId, tenantId),
        or(eq(webhookEndpoints.conversationId, conversationId), isNull(webhookEndpoints.conversationId)),
      ),
    )
    .orderBy(sql`${webhookEndpoints.conversationId} nulls last`)
    .limit(1);
  return row ?? null;
}

/** The JSON body of every delivery. `id` is the delivery id; `conversationId` the client's id. */
export interface WebhookEnvelope {
  id: string;
  type: WebhookEvent;
  createdAt: string;
  conversationId: string;
  data: Record<string, unknown>;
}

/**
 * Records an event for delivery when the conversation's endpoint exists, is enabled and
 * subscribes to it; returns the delivery id to enqueue (after the caller's commit), else null.
 */
export async function recordWebhookEvent(
  db: DbOrTx,
  event: { tenantId: string; conversationId: string; conversationExternalId: string; type: WebhookEvent; data: Record<string, unknown> },
): Promise<string | null> {
  const endpoint = await resolveWebhookEndpoint(db, event.tenantId, event.conversationId);
  if (!endpoint?.enabled) return null;
  if (endpoint.events.length > 0 && !endpoint.events.includes(event.type)) return null;
  const id = randomUUID();
  const envelope: WebhookEnvelope = {
    id,
    type: event.type,
    createdAt: new Date().toISOString(),
    conversationId: event.conversationExternalId,
    data: event.data,
  };
  await db.insert(webhookDeliveries).values({
    id,
    tenantId: event.tenantId,
    conversationId: event.conversationId,
    endpointId: endpoint.id,
    event: event.type,
    url: endpoint.url,
    body: JSON.stringify(envelope),
  });
  return id;
}

/**
 * Records an event about a conversation that is being erased: it goes to the tenant webhook
 * (the conversation's own webhook is erased with it), and the delivery row does not point at
 * the conversation, so it outlives it. Returns the delivery id to enqueue after commit, or null.
 */
export async function recordTenantWebhookEvent(
  db: DbOrTx,
  event: { tenantId: string; conversationExternalId: string; type: WebhookEvent; data: Record<string, unknown> },
): Promise<string | null> {
  const endpoint = await getWebhookEndpoint(db, { tenantId: event.tenantId, conversationId: null });
  if (!endpoint?.enabled) return null;
  if (endpoint.events.length > 0 && !endpoint.events.includes(event.type)) return null;
  const id = randomUUID();
  const envelope: WebhookEnvelope = {
    id,
    type: event.type,
    createdAt: new Date().toISOString(),
    conversationId: event.conversationExternalId,
    data: event.data,
  };
  await db.insert(webhookDeliveries).values({
    id,
    tenantId: event.tenantId,
    conversationId: null,
    endpointId: endpoint.id,
    event: event.type,
    url: endpoint.url,
    body: JSON.stringify(envelope),
  });
  return id;
}

/** A delivery with the endpoint it goes to (null once removed) and the client's conversation id. */
export async function getDeliveryWithEndpoint(
  db: DbOrTx,
  id: string,
): Promise<{ delivery: WebhookDeliveryRow; endpoint: WebhookEndpointRow | null; conversationExternalId: string | null } | null> {
  const [row] = await db
    .select({ delivery: webhookDeliveries, endpoint: webhookEndpoints, conversationExternalId: conversations.externalId })
    .from(webhookDeliveries)
    .leftJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .leftJoin(conversations, eq(conversations.id, webhookDeliveries.conversationId))
    .where(eq(webhookDeliveries.id, id));
  return row ?? null;
}

/** Appends one attempt to the log and sets the delivery's status (only while it is pending). */
export async function recordDeliveryAttempt(
  db: DbOrTx,
  id: string,
  params: { attempt: WebhookAttempt; status: WebhookDeliveryStatus; url: string },
): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({
      status: params.status,
      url: params.url,
      attempts: sql`${webhookDeliveries.attempts} + 1`,
      attemptLog: sql`${webhookDeliveries.attemptLog} || ${JSON.stringify([params.attempt])}::jsonb`,
      lastStatusCode: params.attempt.statusCode,
      lastError: params.attempt.error,
      updatedAt: sql`now()`,
      ...(params.status === 'delivered' ? { deliveredAt: sql`now()` } : {}),
    })
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, 'pending')));
}

/** Gives up on a delivery without an attempt (endpoint removed or disabled, Redis lost its job for good). */
export async function failDelivery(db: DbOrTx, id: string, error: string): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status: 'failed', lastError: error, updatedAt: sql`now()` })
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, 'pending')));
}

export type DeliveryWithConversation = WebhookDeliveryRow & { conversationExternalId: string | null };

/** The tenant's delivery log, newest first; `before` is the id of the last row of the previous page. */
export async function listDeliveries(
  db: DbOrTx,
  tenantId: string,
  params: { conversationId?: string; status?: WebhookDeliveryStatus; event?: WebhookEvent; before?: string; limit: number },
): Promise<DeliveryWithConversation[]> {
  const conditions: SQL[] = [eq(webhookDeliveries.tenantId, tenantId)];
  if (params.conversationId !== undefined) conditions.push(eq(webhookDeliveries.conversationId, params.conversationId));
  if (params.status !== undefined) conditions.push(eq(webhookDeliveries.status, params.status));
  if (params.event !== undefined) conditions.push(eq(webhookDeliveries.event, params.event));
  if (params.before !== undefined) {
    conditions.push(
      sql`(${webhookDeliveries.createdAt}, ${webhookDeliveries.id}) < (select d.created_at, d.id from webhook_deliveries d where d.id = ${params.before})`,
    );
  }
  const rows = await db
    .select({ delivery: webhookDeliveries, conversationExternalId: conversations.externalId })
    .from(webhookDeliveries)
    .leftJoin(conversations, eq(conversations.id, webhookDeliveries.conversationId))
    .where(and(...conditions))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(params.limit);
  return rows.map((r) => ({ ...r.delivery, conversationExternalId: r.conversationExternalId }));
}

/** Pending deliveries untouched for `idleMs`: candidates for the sweep that re-enqueues what Redis lost. */
export async function listStalePendingDeliveries(db: DbOrTx, idleMs: number, limit = 100): Promise<Array<{ id: string }>> {
  return db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(eq(webhookDeliveries.status, 'pending'), lt(webhookDeliveries.updatedAt, sql`now() - make_interval(secs => ${idleMs / 1000})`)),
    )
    .orderBy(webhookDeliveries.updatedAt)
    .limit(limit);
}

/** Marks a pending delivery as seen by the sweep, so it is not checked again for `idleMs`. */
export async function touchDelivery(db: DbOrTx, id: string): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ updatedAt: sql`now()` })
    .where(eq(webhookDeliveries.id, id));
}
