import { describe, expect, it } from 'vitest';

import { missedTargets } from '../../../chaos/lib/result.js';
import { runWorkerCrashes, WORKER_CRASHES_QUICK } from '../../../chaos/scenarios/worker-crashes.js';

// Quick variant of `npm run chaos` §1 (the full run writes RELIABILITY.md).
describe('chaos (quick): worker processes SIGKILLed during compactions', () => {
  it('loses and duplicates no message, repeats no finished LLM call, and resumes orphaned steps within 15 s', async () => {
    const result = await runWorkerCrashes(WORKER_CRASHES_QUICK);
    expect(missedTargets(result), JSON.stringify(result.figures, null, 2)).toEqual([]);
  }, 240_000);
});
