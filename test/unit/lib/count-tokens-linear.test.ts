import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { clearMergeCache, countTokens } from '../../../src/lib/count-tokens.js';
import { BIG_TEXT_SHAPES, bigText } from '../../helpers/big-texts.js';

/**
 * Counting time grows linearly with the text, whatever its shape. A text is a recipe of
 * segments, each a share of the text in one class; scaling the text scales every segment, so
 * a run of spaces (or of one letter, or CJK) grows with it, which is what made counting
 * quadratic. Times are CPU time of this process (less disturbed than wall time by the other
 * work on a shared machine), the median of several repetitions, compared as a ratio.
 */

const CLASSES = [
  'spaces',
  'newlines',
  'tabs',
  'mixed-whitespace',
  'whitespace-punctuation',
  'one-letter',
  'letters',
  'upper-lower',
  'cjk',
  'emoji',
  'digits',
  'punctuation',
  'base64',
  'prose',
  'marks',
] as const;
type SegmentClass = (typeof CLASSES)[number];

const pick = (chars: string, i: number) => chars[(i * 7919 + (i >> 3)) % chars.length]!;
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function segment(kind: SegmentClass, length: number): string {
  const out: string[] = [];
  let size = 0;
  for (let i = 0; size < length; i += 1) {
    const unit = {
      spaces: ' ',
      newlines: '\n',
      tabs: '\t',
      'mixed-whitespace': pick(' \t\n\r\u00a0\u3000', i),
      'whitespace-punctuation': pick(' ;\t,\n|  -', i),
      'one-letter': 'a',
      letters: pick('abcdefghijklmnopqrstuvwxyz', i),
      'upper-lower': pick('AbCdEfGhIjKlMnOp', i),
      cjk: String.fromCharCode(0x4e00 + ((i * 7919) % 0x5000)),
      emoji: '😀',
      digits: pick('0123456789', i),
      punctuation: pick('-=_*#~', i),
      base64: pick(BASE64, i),
      prose: `${['the', 'worker', 'archive', 'failed', 'retry'][i % 5]} `,
      marks: 'e\u0301',
    }[kind];
    out.push(unit);
    size += unit.length;
  }
  return out.join('').slice(0, length);
}

const RECIPE = fc.array(fc.record({ kind: fc.constantFrom(...CLASSES), share: fc.integer({ min: 1, max: 10 }) }), {
  minLength: 1,
  maxLength: 4,
});

function textOf(recipe: ReadonlyArray<{ kind: SegmentClass; share: number }>, length: number): string {
  const total = recipe.reduce((sum, s) => sum + s.share, 0);
  return recipe.map((s) => segment(s.kind, Math.round((length * s.share) / total))).join('');
}

function cpuMs(run: () => void): number {
  const before = process.cpuUsage();
  run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/**
 * The least CPU of a few cold-cache counts: the other processes of a shared machine only ever
 * add to a measure (caches, frequency), so the minimum is the count's own cost.
 */
function leastCpuMs(text: string, repetitions: number): number {
  const times: number[] = [];
  for (let i = 0; i < repetitions; i += 1) {
    clearMergeCache();
    times.push(cpuMs(() => countTokens(text)));
  }
  return Math.min(...times);
}

describe('countTokens time', () => {
  it('grows linearly: 10× the text costs at most 15× the time, whatever its shape', () => {
    countTokens(textOf([{ kind: 'prose', share: 1 }], 10_000)); // compiled before the first measure
    fc.assert(
      fc.property(RECIPE, (recipe) => {
        const small = textOf(recipe, 20_000);
        const large = textOf(recipe, 200_000);
        // a floor of 2 ms keeps the timer's resolution out of the ratio of the cheapest shapes
        const ratio = leastCpuMs(large, 3) / Math.max(2, leastCpuMs(small, 5));
        expect(ratio, JSON.stringify(recipe)).toBeLessThanOrEqual(15);
      }),
      { numRuns: 8 },
    );
  }, 300_000);

  it.each(BIG_TEXT_SHAPES)(
    'counts 2 MB of %s in bounded time',
    (shape) => {
      const text = bigText(shape, 2 * 1024 * 1024);
      countTokens('compiled before the measure');
      clearMergeCache();
      const ms = cpuMs(() => expect(countTokens(text)).toBeGreaterThan(0));
      console.log(`countTokens, 2 MB of ${shape}: ${Math.round(ms)} ms CPU`);
      // generous for a shared machine; the worst shapes (one long line, base64, CJK) take ~2.5–4.5 s
      // of CPU in the tokenizer's BPE itself, linear as the test above shows, whatever the cut
      // length (count-tokens.ts); the API counts such appends off its event loop
      // (test/integration/api/messages-off-loop.test.ts asserts the loop stays free)
      expect(ms).toBeLessThan(12_000);
    },
    120_000,
  );
});
