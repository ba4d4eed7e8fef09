import { describe, expect, it } from 'vitest';

import { createGramSketch } from '../../../src/compaction/recall/gram-sketch.js';
import { findMissingIdentifiers } from '../../../src/compaction/summarize/index.js';
import { missingFromLongText } from '../../../src/worker/commit-parts.js';

/** The commit's lookup of many identifiers in one long clip-archive: a prefilter that never changes the answer. */

function pseudoRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return state / 2 ** 32;
  };
}

const random = pseudoRandom(7);
const alphabet = 'abcdefghij/._-:0123456789 \n\tXYZ';
const textOf = (length: number) => Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
const text = textOf(20_000);

describe('createGramSketch', () => {
  it('never rules out a substring of its text', () => {
    const sketch = createGramSketch(text);
    for (let n = 0; n < 2_000; n += 1) {
      const start = Math.floor(random() * (text.length - 20));
      expect(sketch.mayContain(text.slice(start, start + Math.floor(random() * 20)))).toBe(true);
    }
  });

  it('rules out most needles that are not there', () => {
    const sketch = createGramSketch('src/lib/registry.ex failed with KeyError');
    expect(sketch.mayContain('registry.ex')).toBe(true);
    expect(sketch.mayContain('src/lib/pane_server.ex')).toBe(false);
    expect(sketch.mayContain('abc')).toBe(true);
  });
});

describe('missingFromLongText', () => {
  it('answers as findMissingIdentifiers does, in the same order', () => {
    const present = Array.from({ length: 300 }, () => {
      const start = Math.floor(random() * (text.length - 30));
      return text.slice(start, start + 3 + Math.floor(random() * 25));
    });
    const absent = Array.from({ length: 300 }, () => textOf(3 + Math.floor(random() * 25)));
    // whitespace differences are ignored by both: runs of it and a padded identifier
    const spaced = present.slice(0, 50).map((id) => `  ${id.replace(/ /g, '  \n')} `);
    const ids = [...new Set([...present, ...absent, ...spaced, '', ' ', 'ab'])].sort(() => random() - 0.5);
    const expected = findMissingIdentifiers(ids, text);
    expect(expected.length).toBeGreaterThan(100);
    expect(expected.length).toBeLessThan(ids.length - 100);
    expect(missingFromLongText(ids, text)).toEqual(expected);
  });
});
