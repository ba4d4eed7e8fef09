import { index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

import { createdAt } from './columns.js';

/** Tenants, their API keys and their idempotent POST responses. */

export const tenants = pgTable('tenants', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull().unique(),
  policy: jsonb('policy').$type<Record<string, unknown>>().notNull().default({}),
  /** compactions this tenant may have active at once; null: COMPACTD_TENANT_MAX_ACTIVE */
  maxActiveCompactions: integer('max_active_compactions'),
  /** compactions this tenant may start per minute; null: COMPACTD_TENANT_COMPACTIONS_PER_MINUTE */
  compactionsPerMinute: integer('compactions_per_minute'),
  /**
   * What the tenant may use through the gateway with compactd's own provider key: `models`
   * (null: the gateway provider's models in the registry) and Anthropic server tools by
   * `type` (null: none). Requests with the tenant's own key are not limited
   * (api/gateway/model-access.ts).
   */
  gatewayAccess: jsonb('gateway_access').$type<{ models: string[] | null; serverTools: string[] | null }>(),
  createdAt: createdAt(),
});

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    /** first characters of the key, shown for identification */
    prefix: text('prefix').notNull(),
    /** sha256 of the whole key; the key itself is never stored */
    hash: text('hash').notNull().unique(),
    name: text('name'),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('api_keys_tenant_idx').on(t.tenantId)],
);

/** First responses of POSTs made with an Idempotency-Key, replayed on repeats. */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    route: text('route').notNull(),
    requestHash: text('request_hash').notNull(),
    statusCode: integer('status_code'),
    response: jsonb('response').$type<unknown>(),
    headers: jsonb('headers').$type<Record<string, string>>(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.key] })],
);
