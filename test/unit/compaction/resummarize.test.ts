import { describe, expect, it } from 'vitest';
import { byCoverage, chooseBatchesToCollapse } from '../../../src/compaction/resummarize.js';

const batch = (id: string, first: number, level = 0) => ({ id, level, seqs: [first, first + 1] });

describe('chooseBatchesToCollapse (SPEC §5.5)', () => {
  it.each([
    ['fits exactly', 6, 6, null],
    ['below the maximum', 3, 6, null],
  ])('%s → nothing to collapse', (_name, count, max) => {
    const live = Array.from({ length: count }, (_, i) => batch(`b${i}`, i * 10));
    expect(chooseBatchesToCollapse(live, max)).toBeNull();
  });

  it('collapses the oldest so that exactly maxLiveBatches remain', () => {
    const live = [batch('new1', 100), batch('old2', 10, 1), batch('old1', 1), batch('mid', 50), batch('new2', 200)];
    const choice = chooseBatchesToCollapse(live, 3);
    expect(choice?.batches.map((b) => b.id)).toEqual(['old1', 'old2', 'mid']);
    expect(choice?.level).toBe(2);
    expect(live.length - (choice?.batches.length ?? 0) + 1).toBe(3);
  });

  it('orders by coverage, then id, regardless of input order', () => {
    const shuffled = [batch('b', 5), batch('a', 5), batch('c', 1)];
    expect(byCoverage(shuffled).map((b) => b.id)).toEqual(['c', 'a', 'b']);
  });

  it('merges level-0 batches into level 1', () => {
    const live = Array.from({ length: 7 }, (_, i) => batch(`b${i}`, i));
    expect(chooseBatchesToCollapse(live, 6)).toMatchObject({ level: 1, batches: [{ id: 'b0' }, { id: 'b1' }] });
  });
});
