import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { createTenantSlots } from '../../../src/api/tenant-slots.js';

describe('createTenantSlots', () => {
  it('grants at most `max` slots per tenant at any time, whatever the order of acquires and (repeated) releases', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('acquire' as const), tenant: fc.integer({ min: 0, max: 2 }) }),
      fc.record({ kind: fc.constant('release' as const), index: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.array(op, { maxLength: 80 }), (max, ops) => {
        const slots = createTenantSlots(max);
        const held: Array<{ tenant: string; release: () => void; live: boolean }> = [];
        for (const step of ops) {
          if (step.kind === 'acquire') {
            const tenant = `t${step.tenant}`;
            const live = held.filter((h) => h.live && h.tenant === tenant).length;
            const release = slots.tryAcquire(tenant);
            // granted exactly when the tenant has a free slot
            expect(release !== null).toBe(live < max);
            if (release) held.push({ tenant, release, live: true });
          } else if (held.length > 0) {
            const h = held[step.index % held.length]!;
            h.release(); // a second release of the same slot changes nothing
            h.live = false;
          }
          for (const tenant of ['t0', 't1', 't2']) {
            expect(slots.inUse(tenant)).toBe(held.filter((h) => h.live && h.tenant === tenant).length);
          }
        }
      }),
    );
  });
});
