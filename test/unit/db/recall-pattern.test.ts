import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { containsPattern, fragmentOf, queryWords } from '../../../src/db/repos/archive-search.js';

/** An ILIKE evaluator for the escaped patterns containsPattern writes (`\` escapes; `%`, `_` wildcards). */
function ilike(text: string, pattern: string): boolean {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') re += pattern[++i]!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    else if (c === '%') re += '.*';
    else if (c === '_') re += '.';
    else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'is').test(text);
}

describe('containsPattern', () => {
  it('matches exactly the texts that contain the fragment, wildcards and backslashes taken literally', () => {
    const alphabet = fc.constantFrom('a', 'b', '%', '_', '\\', '/', '.');
    fc.assert(
      fc.property(
        fc.string({ unit: alphabet, minLength: 1, maxLength: 6 }),
        fc.string({ unit: alphabet, maxLength: 12 }),
        (fragment, text) => {
          expect(ilike(text, containsPattern(fragment))).toBe(text.includes(fragment));
        },
      ),
    );
  });
});

describe('fragmentOf', () => {
  it('takes the query, or the inside of one quoted string, from three characters on', () => {
    expect(fragmentOf('  lib/a.ex ')).toBe('lib/a.ex');
    expect(fragmentOf('"exit code 1"')).toBe('exit code 1');
    expect(fragmentOf('"a" OR "b"')).toBe('"a" OR "b"');
    expect(fragmentOf('ab')).toBeNull();
    expect(fragmentOf('"ab"')).toBeNull();
  });
});

describe('queryWords', () => {
  it('keeps the plain words of a web-search query, without operators, exclusions or a common ending', () => {
    expect(queryWords('deploying keys -retry OR "rate limited" at')).toEqual(['deploy', 'key', 'rate', 'limit']);
    expect(queryWords('yes is')).toEqual(['yes']);
  });
});
