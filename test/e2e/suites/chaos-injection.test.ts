import { describe, expect, it } from 'vitest';

import { missedTargets } from '../../../chaos/lib/result.js';
import { runPromptInjection } from '../../../chaos/scenarios/prompt-injection.js';

// `npm run chaos` §7: archived content that tries to break out of the clip-archive framing.
describe('chaos: prompt injection through archived content', () => {
  it('keeps every injection inside a summary section, with the local summarizer and with llm-sim echoing it', async () => {
    const result = await runPromptInjection('quick');
    expect(missedTargets(result), JSON.stringify(result.figures, null, 2)).toEqual([]);
  }, 180_000);
});
