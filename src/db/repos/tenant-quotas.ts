import { eq, sql } from 'drizzle-orm';

import type { TenantQuotas } from '../../config/env.js';
import type { DbOrTx, Tx } from '../client.js';
import { ACTIVE_STATUS_SQL, tenants } from '../schema.js';

/** The window of the enqueue-rate quota. */
export const RATE_WINDOW_MS = 60_000;
/**
 * How long a tenant at its active-compaction limit is told to wait: a slot frees when one of
 * its compactions finishes, which takes seconds; the exact moment is unknowable here.
 */
export const ACTIVE_RETRY_AFTER_MS = 5_000;

export type QuotaLimit = 'active' | 'rate';

export type QuotaVerdict = { ok: true } | { ok: false; limit: QuotaLimit; max: number; retryAfterMs: number };

/** A tenant's quotas: its own columns where set, else the configured defaults. */
export async function tenantQuotas(db: DbOrTx, tenantId: string, defaults: TenantQuotas): Promise<TenantQuotas> {
  const [row] = await db
    .select({ maxActive: tenants.maxActiveCompactions, perMinute: tenants.compactionsPerMinute })
    .from(tenants)
    .where(eq(tenants.id, tenantId));
  return {
    maxActiveCompactions: row?.maxActive ?? defaults.maxActiveCompactions,
    compactionsPerMinute: row?.perMinute ?? defaults.compactionsPerMinute,
  };
}

/**
 * Whether the tenant may start one more compaction now. Runs in the transaction that inserts
 * the job and takes a per-tenant lock first, so two concurrent requests cannot both take the
 * last slot. Consolidations are not counted: a commit starts them, never a caller.
 */
export async function checkCompactionQuota(tx: Tx, tenantId: string, defaults: TenantQuotas): Promise<QuotaVerdict> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`tenant-quota:${tenantId}`}, 0))`);
  const quotas = await tenantQuotas(tx, tenantId, defaults);
  const [counts] = await tx.execute<{ active: number; recent: number }>(sql`
    select
      (select count(*)::int from compaction_jobs
        where tenant_id = ${tenantId} and status in ${ACTIVE_STATUS_SQL} and trigger <> 'consolidate') as active,
      (select count(*)::int from compaction_jobs
        where tenant_id = ${tenantId} and trigger <> 'consolidate' and created_at > now() - make_interval(secs => ${RATE_WINDOW_MS / 1000})) as recent`);
  const active = Number(counts?.active ?? 0);
  const recent = Number(counts?.recent ?? 0);
  if (active >= quotas.maxActiveCompactions) {
    return { ok: false, limit: 'active', max: quotas.maxActiveCompactions, retryAfterMs: ACTIVE_RETRY_AFTER_MS };
  }
  if (recent >= quotas.compactionsPerMinute) {
    // A slot frees when the oldest job that must leave the window for the count to drop below the limit does.
    const [oldest] = await tx.execute<{ wait_ms: number }>(sql`
      select greatest(0, extract(epoch from (created_at + make_interval(secs => ${RATE_WINDOW_MS / 1000}) - now())) * 1000)::float8 as wait_ms
        from compaction_jobs
       where tenant_id = ${tenantId} and trigger <> 'consolidate' and created_at > now() - make_interval(secs => ${RATE_WINDOW_MS / 1000})
       order by created_at
       offset ${recent - quotas.compactionsPerMinute} limit 1`);
    return {
      ok: false,
      limit: 'rate',
      max: quotas.compactionsPerMinute,
      retryAfterMs: Math.max(1_000, Math.ceil(Number(oldest?.wait_ms ?? RATE_WINDOW_MS))),
    };
  }
  return { ok: true };
}

/** Sets (or, with null, clears back to the defaults) a tenant's quotas; false when no tenant has that name. */
export async function setTenantQuotas(
  db: DbOrTx,
  tenantName: string,
  quotas: { maxActiveCompactions?: number | null; compactionsPerMinute?: number | null },
): Promise<boolean> {
  const rows = await db
    .update(tenants)
    .set({
      ...(quotas.maxActiveCompactions === undefined ? {} : { maxActiveCompactions: quotas.maxActiveCompactions }),
      ...(quotas.compactionsPerMinute === undefined ? {} : { compactionsPerMinute: quotas.compactionsPerMinute }),
    })
    .where(eq(tenants.name, tenantName))
    .returning({ id: tenants.id });
  return rows.length > 0;
}

export async function getTenantIdByName(db: DbOrTx, name: string): Promise<string | null> {
  const [row] = await db.select({ id: tenants.id }).from(tenants).where(eq(tenants.name, name));
  return row?.id ?? null;
}
