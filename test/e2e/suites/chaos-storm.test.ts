import { describe, expect, it } from 'vitest';

import { missedTargets } from '../../../chaos/lib/result.js';
import { DUPLICATE_STORM_QUICK, runDuplicateStorm } from '../../../chaos/scenarios/duplicate-storm.js';

// `npm run chaos` §4 at full size: 1,000 concurrent requests over HTTP to a listening API.
describe('chaos: duplicate storms over HTTP', () => {
  it('1,000 compaction requests make one job; 1,000 appends with one Idempotency-Key store once', async () => {
    const result = await runDuplicateStorm(DUPLICATE_STORM_QUICK);
    expect(missedTargets(result), JSON.stringify(result.figures, null, 2)).toEqual([]);
  }, 180_000);
});
