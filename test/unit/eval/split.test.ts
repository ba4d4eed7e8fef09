import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { type EvalCase, loadCorpus } from '../../../eval/corpus.js';
import { splitHalves, splitKey } from '../../../eval/split.js';

/** The eval's development and held-out halves: one documented rule, stable across runs and run modes. */

describe('splitHalves', () => {
  it('puts the first half, rounded up, of the ids ordered by SHA-256 in development', () => {
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const byKey = [...ids].sort((x, y) => (splitKey(x) < splitKey(y) ? -1 : 1));
    const halves = splitHalves(ids);
    expect(byKey.map((id) => halves.get(id))).toEqual(['development', 'development', 'development', 'held-out', 'held-out']);
    expect(splitKey('a')).toBe('ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb');
  });

  it('depends on the ids only, not on the order they come in', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 20 }), fc.nat(), (ids, seed) => {
        const shuffled = [...ids].sort((x, y) => (splitKey(`${seed}${x}`) < splitKey(`${seed}${y}`) ? -1 : 1));
        expect(splitHalves(shuffled)).toEqual(splitHalves(ids));
        const development = [...splitHalves(ids).values()].filter((h) => h === 'development').length;
        expect(development).toBe(Math.ceil(ids.length / 2));
      }),
      { numRuns: 100 },
    );
  });
});

describe('the halves of the eval corpus', () => {
  const full = loadCorpus();
  const heldOut = (cases: readonly EvalCase[]) => cases.filter((c) => c.half === 'held-out').map((c) => c.id);

  it('halves each collection', () => {
    for (const collection of ['claude-code', 'mini-swe-agent', 'tau-bench'] as const) {
      const cases = full.filter((c) => c.collection === collection);
      expect(cases.filter((c) => c.half === 'development').length, collection).toBe(Math.ceil(cases.length / 2));
    }
  });

  it('holds out the cases EVAL.md reports as held out (a change of rule or corpus shows here)', () => {
    expect(heldOut(full)).toEqual(HELD_OUT);
  });

  it("gives a quick run's cases the half they have in a full run", () => {
    const quick = loadCorpus({ quick: true });
    expect(quick.length).toBeGreaterThan(0);
    for (const c of quick) expect(c.half, c.id).toBe(full.find((f) => f.id === c.id)?.half);
  });
});

const HELD_OUT = [
  'cc-4d5611e5',
  'cc-8463c716',
  'swe-matplotlib__matplotlib-25775',
  'swe-pylint-dev__pylint-6528',
  'swe-sphinx-doc__sphinx-9229',
  'swe-sympy__sympy-19040',
  'tau-task-33-trial-0',
  'tau-task-3-trial-1',
  'tau-task-9-trial-2',
  'tau-task-7-trial-0',
  'tau-task-46-trial-3',
];
