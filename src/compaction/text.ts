import type { CountTokens } from './types.js';

/**
 * Token-budgeted text cutting. The tokenizer is a black box passed in, so cuts are made by
 * characters at the text's own chars-per-token rate and then checked with the counter.
 * Only a window of the text near the cut is ever counted (`maxTokens × WINDOW_CHARS_PER_TOKEN`
 * characters), so cutting a few hundred tokens out of a 2 MB message costs the same as out
 * of a 2 KB one: the work is bounded by the budget, not by the text.
 */

/**
 * Characters per token a window allows for: far above any real text's rate (English ~4,
 * code ~3, dense logs less), so a window always holds the whole budget, except in text whose
 * tokens are longer still (long runs of one character), where the cut keeps fewer tokens.
 */
export const WINDOW_CHARS_PER_TOKEN = 32;

/** Moves a cut off the second half of a surrogate pair so no character is split. */
function safeIndex(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff ? index - 1 : index;
}

/** A prefix of at most `maxTokens` tokens, cut at a line end when one is near. */
export function headWithin(whole: string, maxTokens: number, countTokens: CountTokens): string {
  if (maxTokens <= 0) return '';
  const windowChars = maxTokens * WINDOW_CHARS_PER_TOKEN;
  const text = whole.length > windowChars ? whole.slice(0, safeIndex(whole, windowChars)) : whole;
  const total = countTokens(text);
  if (total <= maxTokens) return text;
  let chars = Math.floor((text.length * maxTokens) / total);
  for (let attempt = 0; attempt < 8; attempt += 1) {
    let cut = safeIndex(text, chars);
    const newline = text.lastIndexOf('\n', cut);
    if (newline > cut * 0.8) cut = newline;
    const head = text.slice(0, cut);
    const tokens = countTokens(head);
    if (tokens <= maxTokens) return head;
    chars = Math.floor((chars * maxTokens) / tokens) - 1;
    if (chars <= 0) return '';
  }
  return '';
}

/** A suffix of at most `maxTokens` tokens, cut at a line start when one is near. */
export function tailWithin(whole: string, maxTokens: number, countTokens: CountTokens): string {
  if (maxTokens <= 0) return '';
  const windowChars = maxTokens * WINDOW_CHARS_PER_TOKEN;
  const text = whole.length > windowChars ? whole.slice(safeIndex(whole, whole.length - windowChars)) : whole;
  const total = countTokens(text);
  if (total <= maxTokens) return text;
  let chars = Math.floor((text.length * maxTokens) / total);
  for (let attempt = 0; attempt < 8; attempt += 1) {
    let start = safeIndex(text, text.length - chars);
    const newline = text.indexOf('\n', start);
    if (newline !== -1 && newline - start < chars * 0.2) start = newline + 1;
    const tail = text.slice(start);
    const tokens = countTokens(tail);
    if (tokens <= maxTokens) return tail;
    chars = Math.floor((chars * maxTokens) / tokens) - 1;
    if (chars <= 0) return '';
  }
  return '';
}

/**
 * Keeps `headTokens` from the start and `tailTokens` from the end around a marker line
 * describing what was cut. Returns the text unchanged when it already fits. `totalTokens`
 * (the text's size when known, e.g. counted at ingest) spares counting the whole text.
 */
export function truncateMiddle(
  text: string,
  headTokens: number,
  tailTokens: number,
  countTokens: CountTokens,
  marker: (omittedTokens: number) => string,
  totalTokens?: number,
): string {
  const total = totalTokens ?? countTokens(text);
  if (total <= headTokens + tailTokens) return text;
  const head = headWithin(text, headTokens, countTokens);
  const tail = tailWithin(text.slice(head.length), tailTokens, countTokens);
  const omitted = Math.max(0, total - countTokens(head) - countTokens(tail));
  return `${head}\n${marker(omitted)}\n${tail}`;
}

/** A conservative token estimate for callers that have no tokenizer at hand (never undercounts much). */
export const estimateTokens: CountTokens = (text) => Math.ceil(text.length / 2.5);
