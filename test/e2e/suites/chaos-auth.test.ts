import { describe, expect, it } from 'vitest';

import { missedTargets } from '../../../chaos/lib/result.js';
import { runAuthMatrix } from '../../../chaos/scenarios/auth-matrix.js';

// `npm run chaos` §6: every route on the Fastify instance × every kind of credential.
describe('chaos: tenant isolation and authentication', () => {
  it('answers 401/404 as specified on every route, guards the dashboard and /metrics, stores keys only hashed', async () => {
    const result = await runAuthMatrix('quick');
    expect(missedTargets(result), [JSON.stringify(result.figures, null, 2), ...result.notes].join('\n')).toEqual([]);
  }, 120_000);
});
