import { createHash, randomBytes } from 'node:crypto';

import { and, eq, isNull, sql } from 'drizzle-orm';

import type { DbOrTx } from '../client.js';
import { preparedPerHandle } from '../prepared.js';
import { apiKeys, tenants } from '../schema.js';

const KEY_PREFIX = 'cpd_';
/** Characters of the key kept in clear for identification (`cpd_` + 8). */
const VISIBLE_PREFIX_LENGTH = 12;

export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export async function ensureTenant(db: DbOrTx, name: string): Promise<{ id: string; name: string }> {
  await db.insert(tenants).values({ name }).onConflictDoNothing({ target: tenants.name });
  const [row] = await db.select({ id: tenants.id, name: tenants.name }).from(tenants).where(eq(tenants.name, name));
  if (!row) throw new Error(`tenant ${name} vanished after insert`);
  return row;
}

/** Stores the hash of `key` for the tenant; a key already stored is left as it is. */
export async function insertApiKey(db: DbOrTx, params: { tenantId: string; key: string; name?: string }) {
  const [row] = await db
    .insert(apiKeys)
    .values({
      tenantId: params.tenantId,
      hash: hashApiKey(params.key),
      prefix: params.key.slice(0, VISIBLE_PREFIX_LENGTH),
      name: params.name ?? null,
    })
    .onConflictDoNothing({ target: apiKeys.hash })
    .returning({ id: apiKeys.id, prefix: apiKeys.prefix });
  return row ?? null;
}

/** Creates a new key for the tenant (creating the tenant if needed); the key is returned once. */
export async function createApiKey(db: DbOrTx, params: { tenantName: string; name?: string }) {
  const tenant = await ensureTenant(db, params.tenantName);
  const key = generateApiKey();
  const row = await insertApiKey(db, { tenantId: tenant.id, key, ...(params.name ? { name: params.name } : {}) });
  if (!row) throw new Error('generated API key collided with an existing one');
  return { key, id: row.id, prefix: row.prefix, tenant };
}

const liveKeyByHash = preparedPerHandle((db) =>
  db
    .select({ tenantId: apiKeys.tenantId, keyId: apiKeys.id })
    .from(apiKeys)
    .where(and(eq(apiKeys.hash, sql.placeholder('hash')), isNull(apiKeys.revokedAt)))
    .prepare('live_api_key_by_hash'),
);

export async function findTenantByApiKey(db: DbOrTx, key: string): Promise<{ tenantId: string; keyId: string } | null> {
  const [row] = await liveKeyByHash(db).execute({ hash: hashApiKey(key) });
  return row ?? null;
}

export async function listApiKeys(db: DbOrTx, tenantName?: string) {
  const query = db
    .select({
      id: apiKeys.id,
      prefix: apiKeys.prefix,
      name: apiKeys.name,
      tenant: tenants.name,
      createdAt: apiKeys.createdAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId));
  return tenantName ? query.where(eq(tenants.name, tenantName)) : query;
}

/** Revokes by id or visible prefix; returns how many keys were revoked. */
export async function revokeApiKey(db: DbOrTx, idOrPrefix: string): Promise<number> {
  const isUuid = /^[0-9a-f-]{36}$/i.test(idOrPrefix);
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(isUuid ? eq(apiKeys.id, idOrPrefix) : eq(apiKeys.prefix, idOrPrefix), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return rows.length;
}
