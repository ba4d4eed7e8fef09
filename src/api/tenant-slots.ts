/**
 * A per-tenant cap on work running at once in this process (archive searches): each holds a
 * slot from start to end, and a tenant with all its slots taken is refused instead of queued,
 * so one tenant's burst of heavy requests never takes every database connection. Per
 * process: N API processes allow N × `max` per tenant.
 */
export interface TenantSlots {
  /** a slot for `tenantId`, or null when its `max` are taken; the release is idempotent */
  tryAcquire(tenantId: string): (() => void) | null;
  inUse(tenantId: string): number;
}

export function createTenantSlots(max: number): TenantSlots {
  const taken = new Map<string, number>();
  return {
    tryAcquire(tenantId) {
      const current = taken.get(tenantId) ?? 0;
      if (current >= max) return null;
      taken.set(tenantId, current + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (taken.get(tenantId) ?? 1) - 1;
        if (left <= 0) taken.delete(tenantId);
        else taken.set(tenantId, left);
      };
    },
    inUse: (tenantId) => taken.get(tenantId) ?? 0,
  };
}
