import { encode } from 'gpt-tokenizer';

const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/**
 * Longest run without whitespace handed to the tokenizer in one piece. BPE merging is
 * quadratic in the length of one pre-tokenized word: a 40 KB run of one letter took 7 s and a
 * 1 MB one (a pasted blob, a minified file, an attack) would block the process for hours.
 * Cutting runs into pieces of this size costs at most a token per cut and keeps counting linear.
 */
const MAX_RUN_CHARS = 256;
const LONG_RUN = new RegExp(`(\\S{${MAX_RUN_CHARS}})`);

/**
 * Token count with gpt-tokenizer (o200k_base). Special-token look-alikes such as
 * "<|endoftext|>" in user content are counted as ordinary text: by default the library
 * throws on them, which would turn a harmless message into a 500.
 */
export function countTokens(text: string): number {
  if (!LONG_RUN.test(text)) return encode(text, NO_SPECIAL_TOKENS).length;
  let total = 0;
  // split() with a capturing group keeps the cut-out runs as pieces of their own
  for (const piece of text.split(new RegExp(LONG_RUN.source, 'g'))) if (piece !== '') total += encode(piece, NO_SPECIAL_TOKENS).length;
  return total;
}
