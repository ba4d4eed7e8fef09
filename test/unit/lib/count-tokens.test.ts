import fc from 'fast-check';
import { countTokens as exactCount } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';

import { countTokens, longRunCuts } from '../../../src/lib/count-tokens.js';

const MAX_RUN = 256;
const LONG_RUN = /\s{257}|\S{257}/;
const exact = (text: string) => exactCount(text, { disallowedSpecial: new Set<string>() });

/** One character or short unit of every class the pre-tokenizer tells apart. */
const UNIT = fc.oneof(
  fc.constantFrom(
    ' ',
    '\n',
    '\t',
    '\r\n',
    '\u00a0',
    '\u2003',
    '\u3000',
    '\ufeff',
    '\u200b',
    'a',
    'Z',
    'é',
    '中',
    '😀',
    '👍🏽',
    '7',
    '!',
    '-',
    '/',
    '{',
    '"',
    "'s",
    '\u0301',
    ' \n',
    'x/',
    '==',
  ),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }),
);
/** Texts made of runs of one unit, some far past the cut length. */
const RUNS_TEXT = fc
  .array(
    fc.tuple(UNIT, fc.integer({ min: 1, max: 700 })).map(([unit, n]) => unit.repeat(n)),
    { maxLength: 8 },
  )
  .map((runs) => runs.join(''));

function pieces(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (const cut of longRunCuts(text)) {
    out.push(text.slice(start, cut));
    start = cut;
  }
  out.push(text.slice(start));
  return out;
}

describe('longRunCuts', () => {
  it('cuts exactly the texts holding a run of one class past the limit, into pieces that hold none', () => {
    fc.assert(
      fc.property(RUNS_TEXT, (text) => {
        const cuts = longRunCuts(text);
        expect(cuts.length > 0).toBe(LONG_RUN.test(text));
        expect(pieces(text).join('')).toBe(text);
        for (const piece of pieces(text)) expect(LONG_RUN.test(piece)).toBe(false);
        cuts.forEach((cut, i) => {
          expect(cut).toBeGreaterThan(i === 0 ? 0 : cuts[i - 1]!);
          // never between the halves of a surrogate pair
          expect(/[\ud800-\udbff]/.test(text.charAt(cut - 1)) && /[\udc00-\udfff]/.test(text.charAt(cut))).toBe(false);
        });
      }),
      { numRuns: 400 },
    );
  });

  it('cuts whitespace runs, mixed whitespace and every script, not only runs without whitespace', () => {
    for (const run of [' ', '\n', '\t', ' \t\r\n\u00a0\u3000', '中', '😀', '7', '-', 'a']) {
      const text = `head ${run.repeat(2000)} tail`;
      expect(longRunCuts(text).length, JSON.stringify(run)).toBeGreaterThanOrEqual(Math.floor((run.length * 2000) / MAX_RUN) - 1);
    }
  });

  it('leaves runs at the limit and runs of alternating classes whole', () => {
    expect(longRunCuts(`${'x'.repeat(MAX_RUN)}${' '.repeat(MAX_RUN)}y`)).toEqual([]);
    expect(longRunCuts(' ;'.repeat(100_000))).toEqual([]);
  });
});

describe('countTokens', () => {
  it('counts as the tokenizer does', () => {
    expect(countTokens('hello world')).toBe(2);
    expect(countTokens('<|endoftext|> is text here')).toBe(exact('<|endoftext|> is text here'));
  });

  it('equals the exact count on any text without an over-long run', () => {
    const ordinary = fc
      .oneof(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.string({ unit: 'binary', maxLength: 400 }), RUNS_TEXT)
      .filter((t) => !LONG_RUN.test(t));
    fc.assert(
      fc.property(ordinary, (text) => countTokens(text) === exact(text)),
      { numRuns: 500 },
    );
  });

  it('differs from the exact count by at most 4 tokens per cut on texts with over-long runs', () => {
    fc.assert(
      fc.property(RUNS_TEXT, (text) => {
        const cuts = longRunCuts(text).length;
        expect(Math.abs(countTokens(text) - exact(text))).toBeLessThanOrEqual(4 * cuts);
      }),
      { numRuns: 300 },
    );
  });

  it('counts a run of one character of any class in linear time (a run of 1 MB would take hours in one piece)', () => {
    for (const run of ['x', ' ', '\n']) {
      const started = performance.now();
      expect(countTokens(run.repeat(1_000_000))).toBeGreaterThan(0);
      expect(performance.now() - started).toBeLessThan(20_000);
    }
  });
});
