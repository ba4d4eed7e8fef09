import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { rankUnits, scoreUnit } from '../../../../src/compaction/plan/score.js';
import { groupUnits, type Unit } from '../../../../src/compaction/plan/units.js';
import { ScoringSchema } from '../../../../src/config/policy.js';
import { conversation } from '../../../fixtures/builders.js';

const scoring = ScoringSchema.parse({});
const flat = ScoringSchema.parse({ recency: { weight: 0 } });

function only(messages: ReturnType<ReturnType<typeof conversation>['build']>): Unit {
  const [unit] = groupUnits(messages);
  if (!unit) throw new Error('no unit');
  return unit;
}

describe('scoreUnit (SPEC §5.3)', () => {
  it('reads precomputed features instead of the content when every message has them (the plan step)', () => {
    const [user] = conversation().user('this must not fail?').build();
    const features = (chars: number, keywords: number[], question = false) => ({ userText: true, question, chars, keywords });
    const unit = only([{ ...user!, content: [], features: features(19, [1, 2], true) }]);
    expect(scoreUnit(unit, 0, scoring)).toMatchObject({ question: 2, keywords: 3, length: 0.19 });
    // keywords count once per unit; characters add up with a separator between messages
    const [call, result] = conversation().exchange('a', 'Bash', { command: 'ls' }, 'x').build();
    const exchange = only([
      { ...call!, content: [], features: { ...features(150, [0, 1]), userText: false } },
      { ...result!, content: [], features: { ...features(149, [1]), userText: false } },
    ]);
    expect(exchange.messages).toHaveLength(2);
    expect(scoreUnit(exchange, 0, scoring)).toMatchObject({ question: 0, keywords: 3, length: 3 });
  });

  it.each([
    ['system', conversation().system('be terse').build(), 10],
    ['user', conversation().user('hello there').build(), 5],
    ['assistant', conversation().assistant('hello there').build(), 3],
  ])('role weight of a %s message', (_role, messages, weight) => {
    expect(scoreUnit(only(messages), 0, flat).role).toBe(weight);
  });

  it('gives an orphaned result the tool weight', () => {
    expect(
      scoreUnit(
        only(
          conversation()
            .results([{ id: 'x', output: 'o' }])
            .build(),
        ),
        0,
        flat,
      ).role,
    ).toBe(2);
  });

  it.each([
    ['a question from the user', conversation().user('can you check it?').build(), 'question', 2],
    ['a question from the assistant does not count', conversation().assistant('shall I?').build(), 'question', 0],
    ['tool calls', conversation().exchange('a', 'Bash', { command: 'ls' }, 'x').build(), 'toolCalls', 4],
    ['two keywords', conversation().user('this must not fail').build(), 'keywords', 3],
    ['a keyword counts once', conversation().user('error error error').build(), 'keywords', 1.5],
    ['keywords match word starts', conversation().user('it failed').build(), 'keywords', 1.5],
    ['keywords do not match inside words', conversation().user('terror').build(), 'keywords', 0],
    ['length is capped', conversation().user('x'.repeat(5000)).build(), 'length', 3],
  ] as const)('bonus for %s', (_name, messages, part, value) => {
    expect(scoreUnit(only(messages), 0, scoring)[part]).toBeCloseTo(value);
  });

  it('length adds one per 100 characters', () => {
    expect(scoreUnit(only(conversation().assistant('y'.repeat(150)).build()), 0, scoring).length).toBeCloseTo(1.5);
  });

  it('halves the recency bonus every half-life', () => {
    const unit = only(conversation().assistant('a').build());
    expect(scoreUnit(unit, 0, scoring).recency).toBeCloseTo(4);
    expect(scoreUnit(unit, 24, scoring).recency).toBeCloseTo(2);
    expect(scoreUnit(unit, 48, scoring).recency).toBeCloseTo(1);
  });

  it('uses configured keywords and weights', () => {
    const custom = ScoringSchema.parse({ keywords: ['deploy'], keywordBonus: 10, roleWeights: { user: 1 } });
    const unit = only(conversation().user('deploy now, error').build());
    const score = scoreUnit(unit, 0, custom);
    expect(score.keywords).toBe(10);
    expect(score.role).toBe(1);
  });
});

describe('rankUnits', () => {
  it('sorts ascending: newer and more important units last', () => {
    const messages = conversation().assistant('ok').user('You must always run the tests. What failed?').assistant('ok').build();
    const ranked = rankUnits(groupUnits(messages), 2, scoring).map((r) => r.unit.index);
    expect(ranked).toEqual([0, 2, 1]);
  });

  it('keeps chronological order for equal scores (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('ok', 'fine?', 'error', 'x'.repeat(120)), { minLength: 1, maxLength: 40 }), (texts) => {
        const builder = conversation();
        for (const t of texts) builder.user(t);
        const units = groupUnits(builder.build());
        const ranked = rankUnits(units, units.length - 1, flat);
        for (let i = 1; i < ranked.length; i += 1) {
          const previous = ranked[i - 1];
          const current = ranked[i];
          if (!previous || !current) continue;
          expect(previous.score).toBeLessThanOrEqual(current.score);
          if (previous.score === current.score) expect(previous.unit.index).toBeLessThan(current.unit.index);
        }
      }),
    );
  });
});
