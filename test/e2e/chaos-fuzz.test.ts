import { describe, expect, it } from 'vitest';
import { missedTargets } from '../../chaos/lib/result.js';
import { FUZZ_QUICK, runFuzz } from '../../chaos/scenarios/fuzz.js';

// Quick variant of `npm run chaos` §5: ~1,000 generated and hostile requests via app.inject,
// plus requests malformed at the HTTP level on a socket.
describe('chaos (quick): fuzzing every route', () => {
  it('never answers ≥ 500, answers every error as problem+json, and stores nothing for rejected requests', async () => {
    const result = await runFuzz(FUZZ_QUICK);
    expect(missedTargets(result), [JSON.stringify(result.figures, null, 2), ...result.notes].join('\n')).toEqual([]);
  }, 180_000);
});
