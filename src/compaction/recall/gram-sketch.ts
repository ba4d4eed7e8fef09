import { normalizeSpace } from '../summarize/index.js';

/**
 * A bitset of the hashed 4-character windows of one text: a needle with a window the text
 * does not have is certainly not in it, so a search for many needles in one long text runs
 * `includes` only for the few that may be there. At 1,000 chunks the commit looked thousands
 * of identifiers up in a 1.4 MB clip-archive one full scan each, seconds with the event loop
 * blocked (long enough for the step to lose its queue lock).
 */

const WINDOW = 4;
const BITS = 1 << 24;

function windowHash(text: string, at: number): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < WINDOW; k += 1) h = Math.imul(h ^ text.charCodeAt(at + k), 0x01000193);
  return (h >>> 0) & (BITS - 1);
}

export interface GramSketch {
  /** false: `needle` is certainly not a substring of the text; true: it may be (check it) */
  mayContain(needle: string): boolean;
}

export function createGramSketch(text: string): GramSketch {
  const bits = new Uint32Array(BITS >>> 5);
  for (let i = 0; i + WINDOW <= text.length; i += 1) {
    const h = windowHash(text, i);
    bits[h >>> 5] = (bits[h >>> 5] as number) | (1 << (h & 31));
  }
  return {
    mayContain(needle) {
      // a needle shorter than a window has no window to miss
      for (let i = 0; i + WINDOW <= needle.length; i += 1) {
        const h = windowHash(needle, i);
        if (((bits[h >>> 5] as number) & (1 << (h & 31))) === 0) return false;
      }
      return true;
    },
  };
}

/**
 * A long text prepared once for many whitespace-insensitive substring lookups: its normalized
 * form and that form's sketch (the commit asks the same clip-archive about every identifier of
 * the span and every ledger name).
 */
export interface SearchableText {
  /** whether the text holds `needle` (already normalized: `normalizeSpace(x).trim()`) */
  contains(needle: string): boolean;
}

export function searchableText(text: string): SearchableText {
  const haystack = normalizeSpace(text);
  const sketch = createGramSketch(haystack);
  return { contains: (needle) => sketch.mayContain(needle) && haystack.includes(needle) };
}
