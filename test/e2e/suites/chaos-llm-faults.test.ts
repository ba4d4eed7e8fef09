import { describe, expect, it } from 'vitest';

import { missedTargets } from '../../../chaos/lib/result.js';
import { LLM_FAULTS_QUICK, runLlmFaults } from '../../../chaos/scenarios/llm-faults.js';

// Quick variant of `npm run chaos` §3: 30% of llm-sim calls fail in every way it knows.
describe('chaos (quick): LLM fault storm', () => {
  it('completes with fallbacks recorded, or fails with nothing changed, within the retry bound', async () => {
    const result = await runLlmFaults(LLM_FAULTS_QUICK);
    expect(missedTargets(result), JSON.stringify(result.figures, null, 2)).toEqual([]);
  }, 180_000);
});
