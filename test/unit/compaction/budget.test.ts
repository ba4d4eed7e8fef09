import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkOutputBudget, consolidationOutputBudget, namedIdentifierCount, retryBudget, TOKENS_PER_IDENTIFIER } from '../../../src/compaction/budget.js';
import { mergePolicy } from '../../../src/config/policy.js';

const policy = mergePolicy();

describe('output budgets (SPEC §5.4)', () => {
  it.each([
    [100, 320],
    [4_000, 320],
    [6_000, 420],
    [12_000, 840],
    [100_000, 2_000],
  ])('a chunk of %i source tokens gets %i', (source, budget) => {
    expect(chunkOutputBudget(policy, source)).toBe(budget);
  });

  it('grows with the source and stays within the policy bounds, whatever the policy', () => {
    const bounds = fc.record({
      summaryRatio: fc.double({ min: 0.001, max: 1, noNaN: true }),
      consolidationRatio: fc.double({ min: 0.001, max: 1, noNaN: true }),
      summaryMinTokens: fc.integer({ min: 64, max: 5_000 }),
      summaryMaxTokens: fc.integer({ min: 64, max: 5_000 }),
      maxIdentifiers: fc.integer({ min: 1, max: 500 }),
    });
    fc.assert(
      fc.property(bounds, fc.nat(200_000), fc.nat(200_000), (p, a, b) => {
        const [small, large] = a <= b ? [a, b] : [b, a];
        for (const budget of [chunkOutputBudget, consolidationOutputBudget]) {
          expect(budget(p, small)).toBeLessThanOrEqual(budget(p, large));
          expect(budget(p, large)).toBeLessThanOrEqual(p.summaryMaxTokens);
          expect(budget(p, small)).toBeGreaterThanOrEqual(Math.min(p.summaryMinTokens, p.summaryMaxTokens));
        }
        const named = namedIdentifierCount(p, chunkOutputBudget(p, large));
        expect(named).toBeLessThanOrEqual(p.maxIdentifiers);
        expect(named * TOKENS_PER_IDENTIFIER * 3).toBeLessThanOrEqual(chunkOutputBudget(p, large));
      }),
    );
  });

  it('a consolidation is sized to what it absorbs, and the truncation retry doubles a budget', () => {
    expect(consolidationOutputBudget(policy, 3_000)).toBe(1_800);
    expect(consolidationOutputBudget(policy, 30_000)).toBe(policy.summaryMaxTokens);
    expect(retryBudget(840)).toBe(1_680);
  });
});
