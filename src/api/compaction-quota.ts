import type { TenantQuotas } from '../config/env.js';
import type { Tx } from '../db/client.js';
import { checkCompactionQuota, type QuotaLimit } from '../db/repos/tenant-quotas.js';
import { AppError } from '../lib/errors.js';
import type { CompactionDeferred } from './schemas/messages.js';

export type { CompactionDeferred };

export const QUOTA_CODES = {
  active: 'TENANT_ACTIVE_COMPACTIONS_LIMIT',
  rate: 'TENANT_COMPACTION_RATE_LIMIT',
} as const satisfies Record<QuotaLimit, CompactionDeferred['code']>;

function describe(limit: QuotaLimit, max: number): string {
  return limit === 'active'
    ? `the tenant already has ${max} compactions active (its limit)`
    : `the tenant started ${max} compactions in the last minute (its limit)`;
}

/** POST compactions: a tenant over a quota gets a 429 with `retry-after` (no job, nothing stored). */
export async function enforceCompactionQuota(tx: Tx, tenantId: string, defaults: TenantQuotas): Promise<void> {
  const verdict = await checkCompactionQuota(tx, tenantId, defaults);
  if (verdict.ok) return;
  throw new AppError(QUOTA_CODES[verdict.limit], describe(verdict.limit, verdict.max), {
    status: 429,
    retryable: true,
    retryAfterMs: verdict.retryAfterMs,
  });
}

/**
 * An append's auto compaction: the append itself never fails for a quota. No job is created;
 * the append's answer says why, and the next append past the threshold tries again.
 */
export async function autoCompactionDeferral(tx: Tx, tenantId: string, defaults: TenantQuotas): Promise<CompactionDeferred | null> {
  const verdict = await checkCompactionQuota(tx, tenantId, defaults);
  if (verdict.ok) return null;
  return {
    code: QUOTA_CODES[verdict.limit],
    detail: describe(verdict.limit, verdict.max),
    retryAfter: Math.ceil(verdict.retryAfterMs / 1000),
  };
}
