import { describe, expect, it } from 'vitest';

import { byCoverage, chooseBatchesToConsolidate, needsConsolidation } from '../../../../src/compaction/consolidate/consolidate.js';

const batch = (id: string, first: number, level = 0) => ({ id, level, seqs: [first, first + 1] });

describe('chooseBatchesToConsolidate (SPEC §5.5)', () => {
  it.each([
    ['fits exactly', 6, 6, null],
    ['below the maximum', 3, 6, null],
  ])('%s → nothing to collapse', (_name, count, max) => {
    const live = Array.from({ length: count }, (_, i) => batch(`b${i}`, i * 10));
    expect(chooseBatchesToConsolidate(live, max)).toBeNull();
  });

  it('collapses the lowest levels first, oldest first, so that exactly maxLiveBatches remain', () => {
    const live = [batch('new1', 100), batch('old2', 10, 1), batch('old1', 1), batch('mid', 50), batch('new2', 200)];
    const choice = chooseBatchesToConsolidate(live, 3);
    expect(choice?.batches.map((b) => b.id)).toEqual(['old1', 'mid', 'new1']);
    expect(choice?.level).toBe(1);
    expect(live.length - (choice?.batches.length ?? 0) + 1).toBe(3);
  });

  it('reaches into a higher level only when the lower ones are spent, and returns the merge in coverage order', () => {
    const live = [batch('l1a', 1, 1), batch('l1b', 20, 1), batch('l0', 40), batch('l1c', 30, 1)];
    const choice = chooseBatchesToConsolidate(live, 2);
    expect(choice?.batches.map((b) => b.id)).toEqual(['l1a', 'l1b', 'l0']);
    expect(choice?.level).toBe(2);
  });

  it('over many rounds, a consolidation reads at most one already merged summary, not the whole history', () => {
    let live = [batch('seed', 0)];
    let reads = 0;
    let mostInOne = 0;
    for (let round = 1; round <= 40; round += 1) {
      live.push(batch(`r${round}a`, round * 10), batch(`r${round}b`, round * 10 + 5));
      const choice = chooseBatchesToConsolidate(live, 6);
      if (!choice) continue;
      const merged = choice.batches.filter((b) => b.level > 0).length;
      reads += merged;
      mostInOne = Math.max(mostInOne, merged);
      const ids = new Set(choice.batches.map((b) => b.id));
      live = [...live.filter((b) => !ids.has(b.id)), { id: `m${round}`, level: choice.level, seqs: choice.batches.flatMap((b) => b.seqs) }];
    }
    expect(mostInOne).toBeLessThanOrEqual(1);
    expect(reads).toBeLessThan(40);
  });

  it('orders by coverage, then id, regardless of input order', () => {
    const shuffled = [batch('b', 5), batch('a', 5), batch('c', 1)];
    expect(byCoverage(shuffled).map((b) => b.id)).toEqual(['c', 'a', 'b']);
  });

  it('merges level-0 batches into level 1', () => {
    const live = Array.from({ length: 7 }, (_, i) => batch(`b${i}`, i));
    expect(chooseBatchesToConsolidate(live, 6)).toMatchObject({ level: 1, batches: [{ id: 'b0' }, { id: 'b1' }] });
  });

  it('merges every live batch when the clip-archive is over its budget', () => {
    const live = [batch('b2', 30, 1), batch('b0', 1), batch('b1', 10)];
    expect(chooseBatchesToConsolidate(live, 6, true)).toMatchObject({ level: 2, batches: [{ id: 'b0' }, { id: 'b1' }, { id: 'b2' }] });
    expect(chooseBatchesToConsolidate([batch('b0', 1)], 6, true)).toBeNull();
  });

  it('is due for too many batches, or for an over-budget clip-archive with two or more', () => {
    const policy = { maxLiveBatches: 6, clipArchiveMaxTokens: 3_500 };
    expect(needsConsolidation(7, 100, policy)).toBe(true);
    expect(needsConsolidation(2, 3_501, policy)).toBe(true);
    expect(needsConsolidation(1, 9_000, policy)).toBe(false);
    expect(needsConsolidation(6, 3_500, policy)).toBe(false);
  });
});
