import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { sliceByBytes } from '../../../../src/db/repos/archive.js';

describe('sliceByBytes', () => {
  it('keeps every row once, in order, each slice within the budget unless one row alone exceeds it', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 5_000 }), { maxLength: 200 }), fc.integer({ min: 1, max: 10_000 }), (sizes, maxBytes) => {
        const rows = sizes.map((bytes, index) => ({ index, bytes }));
        const slices = sliceByBytes(rows, maxBytes);
        expect(slices.flat()).toEqual(rows);
        for (const slice of slices) {
          expect(slice.length).toBeGreaterThan(0);
          const total = slice.reduce((sum, row) => sum + row.bytes, 0);
          if (slice.length > 1) expect(total).toBeLessThanOrEqual(maxBytes);
        }
        // greedy: a slice is closed only when the next row would not fit
        for (let i = 0; i + 1 < slices.length; i++) {
          const total = slices[i]!.reduce((sum, row) => sum + row.bytes, 0);
          expect(total + slices[i + 1]![0]!.bytes).toBeGreaterThan(maxBytes);
        }
      }),
    );
  });

  it('gives a row bigger than the budget a slice of its own', () => {
    expect(sliceByBytes([{ bytes: 1 }, { bytes: 50 }, { bytes: 1 }, { bytes: 1 }], 10).map((s) => s.length)).toEqual([1, 1, 2]);
  });
});
