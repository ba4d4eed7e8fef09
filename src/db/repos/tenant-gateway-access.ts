import { eq, sql } from 'drizzle-orm';

import type { DbOrTx } from '../client.js';
import { preparedPerHandle } from '../prepared.js';
import { tenants } from '../schema.js';

/** A tenant's gateway access setting as stored: null fields (or a null column) fall back to the defaults. */
export interface StoredGatewayAccess {
  models: string[] | null;
  serverTools: string[] | null;
}

// Read on every gateway request that uses compactd's provider key: built once per handle.
const accessOfTenant = preparedPerHandle((db) =>
  db
    .select({ access: tenants.gatewayAccess })
    .from(tenants)
    .where(eq(tenants.id, sql.placeholder('tenantId')))
    .prepare('tenant_gateway_access'),
);

export async function getGatewayAccess(db: DbOrTx, tenantId: string): Promise<StoredGatewayAccess | null> {
  const [row] = await accessOfTenant(db).execute({ tenantId });
  return row?.access ?? null;
}

/**
 * Replaces the fields given (null: back to the default) and keeps the others; the column
 * goes back to null once both are defaults. Null when no tenant has that name.
 */
export async function setGatewayAccess(
  db: DbOrTx,
  tenantName: string,
  patch: { models?: string[] | null | undefined; serverTools?: string[] | null | undefined },
): Promise<StoredGatewayAccess | null> {
  return db.transaction(async (tx) => {
    const [row] = await tx.select({ access: tenants.gatewayAccess }).from(tenants).where(eq(tenants.name, tenantName)).for('update');
    if (!row) return null;
    const next: StoredGatewayAccess = {
      models: patch.models === undefined ? (row.access?.models ?? null) : patch.models,
      serverTools: patch.serverTools === undefined ? (row.access?.serverTools ?? null) : patch.serverTools,
    };
    const stored = next.models === null && next.serverTools === null ? null : next;
    await tx.update(tenants).set({ gatewayAccess: stored }).where(eq(tenants.name, tenantName));
    return next;
  });
}
