import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import {
  chunkOutputBudget,
  chunkOutputBudgets,
  consolidationBudgetWithin,
  consolidationOutputBudget,
  namedIdentifierCount,
  narrativeBudget,
  outputCap,
  TOKENS_PER_IDENTIFIER,
} from '../../../../src/compaction/plan/budget.js';
import { mergePolicy } from '../../../../src/config/policy.js';

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

  it('a consolidation is sized to what it absorbs', () => {
    expect(consolidationOutputBudget(policy, 3_000)).toBe(1_800);
    expect(consolidationOutputBudget(policy, 30_000)).toBe(policy.summaryMaxTokens);
  });

  it("max_tokens is a runaway cap with headroom above the target, within the model's output limit", () => {
    // 1.5× the target plus a constant: an answer overrunning its length by a third is not cut
    expect(outputCap(840, 32_000)).toBe(1_388);
    expect(outputCap(2_000, 32_000)).toBe(3_128);
    expect(outputCap(320, 4_096)).toBe(608);
    expect(outputCap(840, 32_000)).toBeGreaterThan(Math.ceil((840 * 4) / 3));
    // the model's limit bounds the headroom, never the target itself
    expect(outputCap(3_000, 4_096)).toBe(4_096);
    expect(outputCap(5_000, 4_096)).toBe(5_000);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50_000 }), fc.integer({ min: 1, max: 200_000 }), (target, limit) => {
        const cap = outputCap(target, limit);
        expect(cap).toBeGreaterThanOrEqual(target);
        expect(cap <= limit || cap === target).toBe(true);
      }),
    );
  });
});

describe('the clip-archive budget shared by the summaries (SPEC §5.7)', () => {
  it('leaves the narrative what the ledger, the framing and the kept summaries do not take', () => {
    expect(narrativeBudget(policy, 200, 0)).toBe(policy.clipArchiveMaxTokens - policy.ledgerMaxTokens - 200);
    expect(narrativeBudget(policy, 200, 1_000)).toBe(policy.clipArchiveMaxTokens - policy.ledgerMaxTokens - 1_200);
    expect(narrativeBudget(policy, 200, 100_000)).toBe(0);
  });

  it("shares the narrative in proportion to the source, within each chunk's own clamp (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 12_000 }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 0, max: 5_000 }),
        (sources, narrative) => {
          const budgets = chunkOutputBudgets(policy, sources, narrative);
          const floor = Math.min(policy.summaryMinTokens, policy.summaryMaxTokens);
          const total = sources.reduce((a, b) => a + b, 0);
          return budgets.every((budget, i) => {
            const own = chunkOutputBudget(policy, sources[i]!);
            const share = Math.floor((narrative * sources[i]!) / total);
            return budget <= own && budget >= Math.min(own, floor) && budget === Math.min(own, Math.max(floor, share));
          });
        },
      ),
    );
  });

  it('gives each chunk its share, the floor when the share is smaller', () => {
    // shares of 1 500: 600, 600 and 300, which the 320-token floor lifts
    expect(chunkOutputBudgets(policy, [12_000, 12_000, 6_000], 1_500)).toEqual([600, 600, 320]);
  });

  it('sizes a consolidation to the narrative left, never below the floor', () => {
    expect(consolidationBudgetWithin(policy, 10_000, 1_900)).toBe(1_900);
    expect(consolidationBudgetWithin(policy, 10_000, 50)).toBe(policy.summaryMinTokens);
    expect(consolidationBudgetWithin(policy, 600, 1_900)).toBe(consolidationOutputBudget(policy, 600));
  });
});
