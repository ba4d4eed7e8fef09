import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

import { createdAt } from './columns.js';
import { conversations } from './history.js';
import { tenants } from './tenants.js';

/**
 * Webhook event types (SPEC §5.5 step 3; README "Webhooks"). Stable names. A text column,
 * not a database enum: adding a type needs no migration.
 */
export const WEBHOOK_EVENTS = [
  'compaction.completed',
  'compaction.failed',
  'compaction.noop',
  'compaction.cancelled',
  'context.warning',
  'conversation.deleted',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/**
 * Callback URLs: one per tenant (`conversation_id` null) and at most one per conversation,
 * which wins over the tenant's. The secret signs deliveries, so it is stored as given.
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    conversationId: uuid('conversation_id').references(() => conversations.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    secret: text('secret').notNull(),
    /** subscribed event types; all of them when empty */
    events: text('events')
      .array()
      .$type<WebhookEvent[]>()
      .notNull()
      .default(sql`'{}'::text[]`),
    enabled: boolean('enabled').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('webhook_endpoints_tenant_uq')
      .on(t.tenantId)
      .where(sql`conversation_id is null`),
    uniqueIndex('webhook_endpoints_conversation_uq')
      .on(t.conversationId)
      .where(sql`conversation_id is not null`),
  ],
);

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One attempt of a delivery, as kept in the delivery log. */
export interface WebhookAttempt {
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** The delivery log: one row per event sent to an endpoint, with every attempt. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    /** also the event id receivers see (`compactd-delivery` header), so they can deduplicate */
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    conversationId: uuid('conversation_id').references(() => conversations.id, { onDelete: 'cascade' }),
    endpointId: uuid('endpoint_id').references(() => webhookEndpoints.id, { onDelete: 'set null' }),
    event: text('event').$type<WebhookEvent>().notNull(),
    url: text('url').notNull(),
    /** the exact JSON body sent (text, not jsonb, so every attempt signs the same bytes) */
    body: text('body').notNull(),
    status: text('status').$type<WebhookDeliveryStatus>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    attemptLog: jsonb('attempt_log').$type<WebhookAttempt[]>().notNull().default([]),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('webhook_deliveries_tenant_idx').on(t.tenantId, t.createdAt),
    index('webhook_deliveries_conversation_idx').on(t.conversationId, t.createdAt),
    index('webhook_deliveries_pending_idx')
      .on(t.updatedAt)
      .where(sql`status = 'pending'`),
  ],
);
