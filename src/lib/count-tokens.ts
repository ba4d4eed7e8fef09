import { loadO200kTokenizer, type Tokenizer } from './o200k-ranks.js';

const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/**
 * The tokenizer caches the merges of words that are not one token, 100k of them by default,
 * evicting the oldest by `map.keys().next()`, which walks past every entry deleted since the
 * map last rehashed: once a token-dense text (a base64 blob, a random-id log) has filled it,
 * each eviction costs up to tens of thousands of steps, and 2 MB of base64 took 11.4 s of CPU
 * where it takes 3.5 s with a small cache (no slower on transcripts: their frequent words are
 * single tokens, which never reach the cache). Set once for the process's one tokenizer.
 */
const MERGE_CACHE_ENTRIES = 1024;

/**
 * The tokenizer is loaded on the first count, not at import: its o200k table (~15 MB of heap,
 * see o200k-ranks.ts) is memory a process that never counts (an idle worker, the CLI) should
 * not hold. `countTokens` is synchronous, so the load is synchronous (one instance per process).
 */
let tokenizer: Tokenizer | undefined;
function loadedTokenizer(): Tokenizer {
  if (tokenizer === undefined) {
    const loaded = loadO200kTokenizer();
    loaded.setMergeCacheSize(MERGE_CACHE_ENTRIES);
    tokenizer = loaded;
  }
  return tokenizer;
}

/** Empties this process's merge cache (a measurement starts from a cold cache). */
export function clearMergeCache(): void {
  loadedTokenizer().clearMergeCache();
}

/**
 * Longest run of one class (whitespace, or anything else) handed to the tokenizer in one piece.
 * o200k pre-tokenizes a run of one class into one word (a run of spaces, a blob, a CJK
 * sentence, a line of emoji or dashes), and both its split regex and BPE merging are quadratic
 * in a word's length: 64k spaces took 2.1 s, a 200k-space message 21.7 s, a 40 KB run of one
 * letter 7 s, all of it on the event loop. Runs of alternating classes pre-tokenize into short
 * words already, so cutting same-class runs bounds every word and keeps counting linear.
 *
 * Error bound: a text with no run longer than this counts exactly as gpt-tokenizer counts it.
 * A cut splits one word in two and BPE re-merges the few bytes on each side of it, so each cut
 * may move the count by a few tokens: at most 3 over 20,000 generated texts (usually 0 or 1;
 * the tests assert ≤ 4). Cuts fall once per MAX_RUN_CHARS characters of an over-long run, so
 * the error stays under 2% of that run's length in characters, and nothing else is affected.
 *
 * Why not shorter: past the quadratic range, BPE costs about the same per byte whatever the
 * piece's length. CPU for 2 MB cut at 256 / 128 / 64 / 32 characters: one long line 3.7 / 4.3 /
 * 3.9 / 3.8 s, random CJK 2.6 / 2.3 / 2.3 / 2.1 s, base64 3.1 / 2.9 / 3.0 / 3.0 s, while shorter
 * cuts double the cost of whitespace runs and add error (at 128 / 64 / 32, tokens over the count at 256: one long line
 * +0.2 / +0.6 / +1.5%, base64 +0.1 / +0.3 / +0.8%). So the densest
 * shapes stay seconds of CPU, and the API counts big appends on threads instead
 * (app/token-count-pool.ts), off its event loop.
 */
const MAX_RUN_CHARS = 256;

/** Exactly the characters of the regex class `\s`. */
const isSpace = (code: number): boolean =>
  code === 32 ||
  (code >= 9 && code <= 13) ||
  code === 0xa0 ||
  code === 0x1680 ||
  (code >= 0x2000 && code <= 0x200a) ||
  code === 0x2028 ||
  code === 0x2029 ||
  code === 0x202f ||
  code === 0x205f ||
  code === 0x3000 ||
  code === 0xfeff;

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/**
 * Where a text is cut so that no piece holds a run of one class longer than MAX_RUN_CHARS:
 * ascending offsets, none for ordinary text. One pass without allocation for the usual case
 * (a regex test would restart its attempt at every position of a dense text). A cut never
 * falls inside a surrogate pair, so an emoji is never counted as two broken halves.
 */
export function longRunCuts(text: string): number[] {
  const cuts: number[] = [];
  let run = 0;
  let inSpace = false;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    const space = isSpace(code);
    if (space !== inSpace) {
      inSpace = space;
      run = 0;
    }
    if (run === MAX_RUN_CHARS) {
      const cut = isLowSurrogate(code) ? i - 1 : i;
      cuts.push(cut);
      run = i - cut;
    }
    run += 1;
  }
  return cuts;
}

/**
 * Token count with gpt-tokenizer (o200k_base), through its counting API: the same number as
 * `encode(…).length` without building the token array (as fast or faster on real transcripts).
 * Special-token look-alikes such as "<|endoftext|>" in user content are counted as ordinary text: by default the library
 * throws on them, which would turn a harmless message into a 500. Over-long runs are counted
 * in pieces (see MAX_RUN_CHARS), so the time is linear in the text's length whatever its shape.
 */
export function countTokens(text: string): number {
  const countWithTokenizer = loadedTokenizer().countTokens;
  const cuts = longRunCuts(text);
  if (cuts.length === 0) return countWithTokenizer(text, NO_SPECIAL_TOKENS);
  let total = 0;
  let start = 0;
  for (const cut of cuts) {
    total += countWithTokenizer(text.slice(start, cut), NO_SPECIAL_TOKENS);
    start = cut;
  }
  return total + countWithTokenizer(text.slice(start), NO_SPECIAL_TOKENS);
}
