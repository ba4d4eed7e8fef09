import { describe, expect, it } from 'vitest';

import { cachedAt, remember } from '../../../../src/api/gateway/conversation-cache.js';

describe('conversation cache', () => {
  it('serves an entry only at the version it was read at', () => {
    remember('c1', { version: 3, stored: { keys: new Map([[0, 'm0-a']]), activeFrom: 0 }, rows: null });
    expect(cachedAt('c1', 3)?.stored.keys.get(0)).toBe('m0-a');
    // a compaction, a revert or another process's append bumped the version
    expect(cachedAt('c1', 4)).toBeNull();
    expect(cachedAt('other', 3)).toBeNull();
  });

  it('forgets the least recently used conversation past its bound', () => {
    for (let i = 0; i < 1_001; i += 1) remember(`bulk-${i}`, { version: 1, stored: { keys: new Map(), activeFrom: 0 }, rows: null });
    expect(cachedAt('bulk-0', 1)).toBeNull();
    expect(cachedAt('bulk-1000', 1)).not.toBeNull();
  });
});
