import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countTokens, hasLongRun } from '../../../src/lib/count-tokens.js';

describe('hasLongRun', () => {
  it('agrees with the regex /\\S{256}/ on any text', () => {
    const chars = fc.constantFrom('a', 'b', ' ', '\n', '\t', '\u00a0', '\u2003', '\u3000', '\ufeff', '\u200b', 'é', '{', '"');
    const text = fc.array(fc.oneof(chars, fc.constant('x'.repeat(200))), { maxLength: 400 }).map((parts) => parts.join(''));
    fc.assert(fc.property(text, (t) => hasLongRun(t) === /\S{256}/.test(t)), { numRuns: 500 });
  });

  it('counts a dense text without long runs as the tokenizer does, and stays linear on one long run', () => {
    expect(countTokens('hello world')).toBe(2);
    const started = performance.now();
    expect(countTokens('x'.repeat(1_000_000))).toBeGreaterThan(0);
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});
