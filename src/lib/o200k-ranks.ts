import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

import type * as GptEncodingModule from 'gpt-tokenizer/GptEncoding';

/** What a count needs of gpt-tokenizer's encoding API. */
export type Tokenizer = Pick<
  ReturnType<typeof GptEncodingModule.GptEncoding.getEncodingApi>,
  'countTokens' | 'setMergeCacheSize' | 'clearMergeCache'
>;

const requireFromHere = createRequire(import.meta.url);

/** One rank's bytes as gpt-tokenizer's own table holds them: the text when it is UTF-8, else the bytes. */
type RankEntry = string | number[];

const BASE64_VALUES = (() => {
  const values = new Int8Array(128).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < alphabet.length; i += 1) values[alphabet.charCodeAt(i)] = i;
  return values;
})();

/**
 * Decodes the base64 in `file[start, end)` into the start of `into`; returns how many bytes it
 * wrote. One pass over the characters: `Buffer.from(…, 'base64')` for each of 200,000 short
 * tokens spent more on the calls than on the decoding.
 */
function decodeBase64(file: string, start: number, end: number, into: Uint8Array): number {
  let bits = 0;
  let held = 0;
  let out = 0;
  for (let i = start; i < end; i += 1) {
    const code = file.charCodeAt(i);
    if (code === 61) break; // '=' padding ends the token
    const value = code < 128 ? (BASE64_VALUES[code] as number) : -1;
    if (value < 0) throw new Error(`o200k_base.tiktoken: not base64 at offset ${i}`);
    bits = (bits << 6) | value;
    held += 6;
    if (held >= 8) {
      held -= 8;
      into[out] = (bits >> held) & 0xff;
      out += 1;
    }
  }
  return out;
}

/**
 * The entry of the token in the first `length` bytes, by the rule gpt-tokenizer generated its
 * table with (a strict UTF-8 decode that re-encodes to the same bytes): valid UTF-8 is text,
 * except a token starting with a byte-order mark, which that decoder drops, so it stays bytes;
 * anything else stays bytes.
 */
function rankEntry(bytes: Buffer, length: number): RankEntry {
  let ascii = true;
  for (let i = 0; i < length && ascii; i += 1) ascii = (bytes[i] as number) < 0x80;
  // most tokens are ASCII: text without a UTF-8 check
  if (ascii) return bytes.toString('latin1', 0, length);
  const token = bytes.subarray(0, length);
  const startsWithBom = length >= 3 && token[0] === 0xef && token[1] === 0xbb && token[2] === 0xbf;
  return isUtf8(token) && !startsWithBom ? token.toString('utf8') : Array.from(token);
}

/**
 * gpt-tokenizer's o200k_base ranks read from the package's own data file
 * (`data/o200k_base.tiktoken`: one "base64-bytes rank" line per token), not from its generated
 * JavaScript module. Same table, same counts (a test compares every rank); the difference is
 * where the memory stays. Compiling the 2.4 MB array literal leaves ~30 MB of the process's
 * memory outside V8's heap (the parser's and compiler's allocations, which the allocator keeps),
 * on top of the table itself; reading the text file builds the same ~15 MB of strings in the
 * heap and nothing else, in the same ~0.2 s: a worker's peak RSS is ~15 MB lower (section 6 of
 * BENCH.md), and so is each counting thread of the API's.
 */
export function loadO200kRanks(): RankEntry[] {
  const file = readFileSync(requireFromHere.resolve('gpt-tokenizer/data/o200k_base.tiktoken'), 'latin1');
  // one token's bytes at a time, in a buffer grown to the longest (base64: 3 bytes per 4 characters)
  let bytes = Buffer.allocUnsafe(256);
  const ranks: RankEntry[] = [];
  let start = 0;
  while (start < file.length) {
    const lineEnd = file.indexOf('\n', start);
    const end = lineEnd === -1 ? file.length : lineEnd;
    const space = file.indexOf(' ', start);
    if (space === -1 || space > end) throw new Error(`o200k_base.tiktoken: malformed line at offset ${start}`);
    const rank = Number(file.slice(space + 1, end));
    // ranks the file skips stay empty, as in the generated table
    while (ranks.length < rank) ranks.push('');
    if (((space - start) * 3) / 4 > bytes.length) bytes = Buffer.allocUnsafe(space - start);
    ranks.push(rankEntry(bytes, decodeBase64(file, start, space, bytes)));
    start = end + 1;
  }
  return ranks;
}

/** gpt-tokenizer's o200k_base encoding over the ranks read from its data file. */
export function loadO200kTokenizer(): Tokenizer {
  const { GptEncoding } = requireFromHere('gpt-tokenizer/GptEncoding') as typeof GptEncodingModule;
  const ranks = loadO200kRanks();
  return GptEncoding.getEncodingApi('o200k_base', () => ranks);
}
