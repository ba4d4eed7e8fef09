import { describe, expect, it } from 'vitest';

import { missedTargets } from '../../../chaos/lib/result.js';
import { FUZZ_QUICK, runFuzz } from '../../../chaos/scenarios/fuzz.js';

// Quick variant of `npm run chaos` §5: every string field of every route × every hostile value
// (the deterministic field matrix), ~1,000 generated and hostile requests via app.inject,
// requests malformed at the HTTP level on a socket, and a scan of the API log for the secrets used.
describe('chaos (quick): fuzzing every route', () => {
  it('never answers ≥ 500, answers every error as problem+json, and stores nothing for rejected requests', async () => {
    const result = await runFuzz(FUZZ_QUICK);
    expect(missedTargets(result), [JSON.stringify(result.figures, null, 2), ...result.notes].join('\n')).toEqual([]);
    // the checks ran on something: a matrix over many fields, and log lines to scan
    expect(result.figures['field matrix requests (every string field × every hostile value)']).toBeGreaterThan(1_000);
    expect(result.figures['API log lines scanned for secrets']).toBeGreaterThan(1_000);
  }, 180_000);
});
