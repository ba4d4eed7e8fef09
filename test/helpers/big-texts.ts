/**
 * Texts of the shapes a hostile or careless client sends, at any size: a pasted table or log,
 * a minified line, a blob, a run of one character. Deterministic (a seeded generator), so a
 * failure reproduces; every shape is sized in UTF-8 bytes, the unit of the message size limit.
 */

export const BIG_TEXT_SHAPES = [
  'prose',
  'spaces',
  'newlines',
  'tabs',
  'whitespace-punctuation',
  'whitespace-table',
  'long-line',
  'dense-logs',
  'cjk',
  'emoji',
  'base64',
] as const;
export type BigTextShape = (typeof BIG_TEXT_SHAPES)[number];

/** A small linear congruential generator: the same text for the same seed on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

const WORDS = [
  'the',
  'worker',
  'compaction',
  'archive',
  'failed',
  'because',
  'of',
  'a',
  'timeout',
  'in',
  'request',
  'handler',
  'retry',
  'after',
  'deploy',
  'config',
];
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const LEVELS = ['INFO', 'WARN', 'ERROR', 'DEBUG'];

/** One repeatable unit of a shape (varied by the generator), and the one-byte character that pads it. */
const UNITS: Record<BigTextShape, { unit: (rnd: () => number, i: number) => string; pad: string }> = {
  prose: { unit: (rnd, i) => `${WORDS[Math.floor(rnd() * WORDS.length)]}${i % 13 === 12 ? '.\n' : ' '}`, pad: ' ' },
  spaces: { unit: () => ' '.repeat(64), pad: ' ' },
  newlines: { unit: () => '\n'.repeat(64), pad: ' ' },
  tabs: { unit: () => '\t'.repeat(64), pad: ' ' },
  'whitespace-punctuation': { unit: (rnd) => [' \t', ';', '  ', ',', '\n', ' -', '|', '  .'][Math.floor(rnd() * 8)]!, pad: ' ' },
  'whitespace-table': {
    unit: (rnd, i) =>
      `|${String(i).padStart(10)}${' '.repeat(40)}|${(rnd() * 1000).toFixed(2).padStart(30)}${' '.repeat(60)}|${' '.repeat(50)}|\n`,
    pad: ' ',
  },
  'long-line': { unit: (rnd) => BASE64.slice(0, 62)[Math.floor(rnd() * 62)]!.repeat(1 + Math.floor(rnd() * 3)), pad: 'x' },
  'dense-logs': {
    unit: (rnd, i) =>
      `2026-11-25T08:${String(i % 60).padStart(2, '0')}:${(rnd() * 60).toFixed(3).padStart(6, '0')}Z ${LEVELS[i % 4]} [w-${i % 7}] req=${Math.floor(rnd() * 2 ** 32).toString(16)} path=/v1/c/${i % 97}/m?x=${i} status=${200 + (i % 5) * 100} t=${Math.floor(rnd() * 999)}ms\n`,
    pad: 'x',
  },
  cjk: { unit: (rnd) => String.fromCharCode(0x4e00 + Math.floor(rnd() * 0x5000)), pad: 'x' },
  emoji: { unit: () => '😀', pad: 'x' },
  base64: { unit: (rnd) => BASE64[Math.floor(rnd() * 64)]!, pad: 'A' },
};

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** A text of the shape whose size, as `measure` counts it (UTF-8 bytes by default), is exactly `bytes`. */
export function bigText(shape: BigTextShape, bytes: number, measure: (text: string) => number = utf8Bytes, seed = 26): string {
  const { unit, pad } = UNITS[shape];
  const rnd = seeded(seed);
  const parts: string[] = [];
  const empty = measure('');
  let size = empty;
  for (let i = 0; size < bytes; i += 1) {
    const part = unit(rnd, i);
    parts.push(part);
    size += measure(part) - empty;
  }
  let text = parts.join('');
  // each code unit cut takes at least one byte off: one cut of the excess fits (never half a surrogate pair)
  for (let excess = measure(text) - bytes; excess > 0; excess = measure(text) - bytes) {
    let cut = Math.max(0, text.length - excess);
    if (/[\udc00-\udfff]/.test(text.charAt(cut))) cut -= 1;
    text = text.slice(0, cut);
  }
  return text + pad.repeat(bytes - measure(text));
}
