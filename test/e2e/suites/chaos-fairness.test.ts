import { describe, expect, it } from 'vitest';

import { missedTargets } from '../../../chaos/lib/result.js';
import { runTenantFairness, TENANT_FAIRNESS_QUICK } from '../../../chaos/scenarios/tenant-fairness.js';

// Quick variant of `npm run chaos -- --only tenant-fairness`: a flood of 60 instead of 200.
describe("chaos (quick): tenant A's compaction under tenant B's flood", () => {
  it('keeps A within 1.6× of its time alone under the default concurrency (1.3× in the full variant, run alone) and loses nothing', async () => {
    const result = await runTenantFairness(TENANT_FAIRNESS_QUICK);
    expect(missedTargets(result), JSON.stringify(result.figures, null, 2)).toEqual([]);
  }, 600_000);
});
