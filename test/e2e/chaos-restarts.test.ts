import { describe, expect, it } from 'vitest';
import { DRIVER_CRASH_FIGURE } from '../../chaos/lib/outcome.js';
import { missedTargets } from '../../chaos/lib/result.js';
import { runServiceRestarts, SERVICE_RESTARTS_QUICK } from '../../chaos/scenarios/service-restarts.js';

// Quick variant of `npm run chaos` §2: a private Redis SIGKILLed and restarted, then flushed,
// and a private Postgres crashed and restarted, while compactions run and appends continue.
describe('chaos (quick): Redis and Postgres restarts during compactions', () => {
  it('every job ends, nothing is lost or half-committed, and outages answer 503, not 500', async () => {
    const result = await runServiceRestarts(SERVICE_RESTARTS_QUICK);
    // The one allowance, named: postgres.js 3.4.9 can crash a process when Postgres restarts
    // (an exception thrown from its own setImmediate, uncatchable here; upstream #1208, see
    // RELIABILITY.md). The harness restarts the process as compose does; any other crash, and
    // every data target (nothing lost, duplicated or half-committed, every job terminal), fails.
    const missed = missedTargets(result).filter((line) => !line.includes(DRIVER_CRASH_FIGURE));
    expect(missed, JSON.stringify(result.figures, null, 2)).toEqual([]);
  }, 240_000);
});
