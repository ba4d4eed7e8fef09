import { describe, expect, it } from 'vitest';

import { missedTargets } from '../../../chaos/lib/result.js';
import { runServiceRestarts, SERVICE_RESTARTS_QUICK } from '../../../chaos/scenarios/service-restarts.js';

// Quick variant of `npm run chaos` §2: a private Redis SIGKILLed and restarted, then flushed,
// and a private Postgres crashed and restarted, while compactions run and appends continue.
// Every target holds, with no allowance: no process crashes (the harness restarts one that
// does, and counts it), nothing is lost, duplicated or half-committed, every job ends.
describe('chaos (quick): Redis and Postgres restarts during compactions', () => {
  it('every job ends, nothing is lost or half-committed, no process crashes, and outages answer 503, not 500', async () => {
    const result = await runServiceRestarts(SERVICE_RESTARTS_QUICK);
    expect(missedTargets(result), JSON.stringify(result.figures, null, 2)).toEqual([]);
  }, 240_000);
});
