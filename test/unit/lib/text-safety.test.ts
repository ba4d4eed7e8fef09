import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { jsonProblem, METADATA_BOUNDS, textProblem } from '../../../src/lib/text-safety.js';

/** A string is storable when it has a UTF-8 encoding and no NUL: exactly what `textProblem` accepts. */
const storable = (text: string) => !text.includes('\u0000') && Buffer.from(text, 'utf8').toString('utf8') === text;

describe('textProblem', () => {
  it.each([
    ['plain', 'hello', null],
    ['astral pair', '🙂', null],
    ['NUL', 'a\u0000', /NUL/],
    ['lone high at the end', 'a\uD83D', /surrogate/],
    ['lone low', '\uDE42a', /surrogate/],
    ['reversed pair', '\uDE42\uD83D', /surrogate/],
    ['noncharacters are allowed', '\uFFFE\uFFFF', null],
  ])('%s', (_name, text, expected) => {
    const problem = textProblem(text);
    if (expected === null) expect(problem).toBeNull();
    else expect(problem).toMatch(expected);
  });

  it('accepts exactly the strings that survive a UTF-8 round trip without NUL', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => (textProblem(text) === null) === storable(text)),
      { numRuns: 500 },
    );
  });
});

describe('jsonProblem', () => {
  it('walks a 5,000-deep document without recursion and names where it got too deep', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 5_000; i++) deep = { a: deep };
    const problem = jsonProblem(deep, METADATA_BOUNDS);
    expect(problem?.message).toMatch(/deeper than 32/);
    expect(problem?.path).toHaveLength(32);
  });

  it('checks keys and strings at any depth, and the size', () => {
    expect(jsonProblem({ a: [{ b: 'x\u0000' }] }, METADATA_BOUNDS)).toEqual({
      path: ['a', '0', 'b'],
      message: expect.stringMatching(/NUL/),
    });
    expect(jsonProblem({ ['\uD800']: 1 }, METADATA_BOUNDS)?.message).toMatch(/key .*surrogate/);
    expect(jsonProblem({ blob: 'z'.repeat(70_000) }, METADATA_BOUNDS)?.message).toMatch(/at most 65536/);
    expect(jsonProblem({ fine: ['🙂', 1, null, true, { x: 'ok' }] }, METADATA_BOUNDS)).toBeNull();
  });
});
