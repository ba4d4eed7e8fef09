import { describe, expect, it } from 'vitest';

import { isFenceId } from '../../../src/compaction/summarize/request-fence.js';
import { newFenceId } from '../../../src/worker/chunk-source.js';

// The worker draws the fence's ID (the core takes no randomness): 64 random bits per step.
describe('newFenceId', () => {
  it('is a valid fence ID, new at every draw', () => {
    const ids = Array.from({ length: 1_000 }, newFenceId);
    expect(ids.every(isFenceId)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
