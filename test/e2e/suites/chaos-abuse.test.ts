import { describe, expect, it } from 'vitest';

import { missedTargets } from '../../../chaos/lib/result.js';
import { ABUSE_QUICK, runAbuse } from '../../../chaos/scenarios/abuse/index.js';

// Quick variant of `npm run chaos -- --only abuse` (SPEC §8): a 200k-space message, a message at the
// maximum size of each shape compacted and searched, 2000 long-polls, an export bigger than the API's
// heap, and no SQL in any job's error. Every wait in it is bounded, so on code that misses a target
// it fails with the figures rather than hanging.
describe('chaos (quick): abuse bounds, one client against everyone else', () => {
  it('meets every abuse target', async () => {
    const result = await runAbuse(ABUSE_QUICK);
    expect(missedTargets(result), JSON.stringify({ figures: result.figures, notes: result.notes }, null, 2)).toEqual([]);
  }, 1_200_000);
});
