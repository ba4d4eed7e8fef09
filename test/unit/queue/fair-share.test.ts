import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { tenantSlotCaps } from '../../../src/queue/fair-share.js';

describe('tenantSlotCaps', () => {
  it.each([
    // slots, reserve → alone, shared
    [16, 2, 16, 14],
    [16, 0, 16, 16],
    [4, 2, 4, 2],
    [2, 2, 2, 1],
    [1, 2, 1, 1],
    [16, 100, 16, 1],
  ])('%i slots, reserve %i: alone %i, shared %i', (slots, reserve, alone, shared) => {
    expect(tenantSlotCaps(slots, reserve)).toEqual({ alone, shared });
  });

  it('a tenant alone holds every slot; with others about it keeps at least one and leaves the reserve when it can', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 0, max: 1000 }), (slots, reserve) => {
        const caps = tenantSlotCaps(slots, reserve);
        expect(caps.alone).toBe(slots);
        expect(caps.shared).toBeGreaterThanOrEqual(1);
        expect(caps.shared).toBeLessThanOrEqual(caps.alone);
        expect(slots - caps.shared).toBe(Math.min(reserve, slots - 1));
      }),
    );
  });
});
