/**
 * Neutralizing our own delimiters inside text we frame (clip-archive summaries, the
 * summarizer's transcript fence). The text is read the way a person or a model would see it:
 * invisible characters dropped however many lie between a delimiter's characters, every
 * character decomposed (NFKD: fullwidth, mathematical, circled, accented and ligature forms
 * fall apart into their base letters), marks dropped, and look-alike letters from other
 * scripts (Cyrillic, Greek, Armenian, Cherokee, Coptic, Lisu, small capitals, IPA) folded
 * to the Latin letter they imitate. Each '<' that then opens one of the protected tag words
 * is escaped at its source: `&lt;` for '<' itself, a numeric reference (`&#xFF1C;`) for a
 * look-alike, so reading back restores the very character. One pass and a fixed look-ahead over visible
 * characters: linear in the text, no regex backtracking.
 */

const LT_LIKE = new Set([
  '<',
  '\uFF1C',
  '\uFE64',
  '\u2039',
  '\u3008',
  '\u27E8',
  '\u2329',
  '\u1438',
  '\u02C2',
  '\u276E',
  '\u276C',
  '\u29FC',
  '\u227A',
  '\u22D6',
]);
const SLASH_LIKE = new Set([
  '/',
  '\uFF0F',
  '\u2215',
  '\u2044',
  '\u29F8',
  '\u2571',
  '\u30CE',
  '\u3033',
  '\u4E3F',
  '\u2F03',
  '\u27CB',
  '\u1735',
]);

/** Look-alikes of the Latin letters our tag words use (from Unicode's confusables), upper and lower case. */
const LETTER_LOOKALIKES: Record<string, string> = {
  a: '\u2C81\u0430\u0410\u0251\u03B1\u0391\u1D00\u237A\u13AA\uA4EE\u15C5',
  c: '\u0441\u0421\u03F2\u03F9\u1D04\u2CA5\u2CA4\uAB6F\u13DF\uA4DA\u0188\u{1043D}\u{10415}\u217D',
  d: '\u0501\u1D05\u0257\u0256\u0111\u13A0\uA4D3\u13E7\u217E',
  e: '\u0435\u0415\u04BD\u1D07\u212E\u03B5\u0395\u13AC\uA4F0\u2C89',
  i: '\u0456\u0406\u0131\u0269\u03B9\u0399\u026A\u04CF\u04C0\uA647\u13A5\u2170',
  m: '\u2C99\u043C\u041C\u1D0D\u0271\uAB87\u13B7\uA4DF\u039C\u03FB\u217F',
  n: '\u0578\u0274\u043F\u03B7\u057C\u039D\uA4E0',
  o: '\u043E\u041E\u03BF\u039F\u03C3\u0585\u0555\u1D0F\u2C9F\u2C9E\u0D20\u00F8\u00D8\u0275\u13A4\uA4F3\u{10448}\u{10420}\u{1D3C}\u2134',
  p: '\u0440\u0420\u03C1\u03A1\u03F1\u1D18\u2CA3\u2CA2\u2374\u01A5\u13E2\uA4D1\u{1D29}',
  r: '\u0433\u0280\u1D26\uAB47\u027E\u027C\u027D\u13A1\u13D2\uA4E3',
  s: '\u0455\u0405\uA731\u0282\uABAA\u13DA\uA4E2\u01BD',
  t: '\u2CA7\u0442\u0422\u03C4\u03A4\u1D1B\u0167\u01AD\u0288\u13A2\uA4D4',
};
const CONFUSABLES = new Map<string, string>();
for (const [latin, lookalikes] of Object.entries(LETTER_LOOKALIKES)) {
  for (const ch of lookalikes) CONFUSABLES.set(ch, latin);
}

/**
 * What a reader does not see, or sees as nothing between two characters: controls, format
 * characters (zero-width spaces and joiners, bidi marks, tags), marks, separators and spaces,
 * default-ignorable code points (Hangul fillers, variation selectors), private-use and
 * unassigned code points, lone surrogates.
 */
const INVISIBLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{M}\p{Z}\p{Default_Ignorable_Code_Point}\s]$/u;

function foldPart(part: string): string {
  if (INVISIBLE.test(part)) return '';
  if (LT_LIKE.has(part)) return '<';
  if (SLASH_LIKE.has(part)) return '/';
  const direct = CONFUSABLES.get(part);
  if (direct !== undefined) return direct;
  const lower = part.toLowerCase();
  return CONFUSABLES.get(lower) ?? lower;
}

/** Folds of the non-ASCII code points met so far (texts repeat few distinct ones); bounded. */
const FOLDED = new Map<string, string>();
const MAX_FOLDED = 8_192;

/** How one code point reads: '' when invisible, else its decomposed form with look-alikes mapped, lower case. */
function foldChar(ch: string): string {
  const code = ch.charCodeAt(0);
  if (code < 0x80) return code <= 0x20 || code === 0x7f ? '' : ch.toLowerCase();
  const known = FOLDED.get(ch);
  if (known !== undefined) return known;
  const folded = foldNonAscii(ch);
  if (FOLDED.size < MAX_FOLDED) FOLDED.set(ch, folded);
  return folded;
}

function foldNonAscii(ch: string): string {
  const whole = foldPart(ch);
  if (whole === '<' || whole === '/' || (whole.length > 0 && whole.charCodeAt(0) < 0x80)) return whole;
  if (whole === '') return '';
  let out = '';
  for (const part of ch.normalize('NFKD')) out += foldPart(part);
  return out;
}

/**
 * Whether `letters` spell `word` as a reader would take it: each letter is the word's own
 * or some non-ASCII letter no table lists, and at most a few are the latter. Real words that
 * share a prefix (`<component>`) differ in an ASCII letter and pass.
 */
function spells(letters: readonly string[], from: number, word: string): boolean {
  if (letters.length - from < word.length) return false;
  const tolerance = Math.min(3, Math.floor((word.length * 3) / 8));
  let other = 0;
  for (let i = 0; i < word.length; i += 1) {
    const ch = letters[from + i] as string;
    if (ch === word[i]) continue;
    if (/[\x00-\x7F]/.test(ch) || !/\p{L}/u.test(ch)) return false;
    other += 1;
    if (other > tolerance) return false;
  }
  return true;
}

/** Visible characters between '<' and the tag word that still read as a tag: `</`, `<\\`, `<|/`, `<!`. */
const MAX_TAG_PUNCTUATION = 2;

/** Whether the visible characters after a '<' read as one of `words`, maybe after a slash or two. */
function opensTag(after: readonly string[], words: readonly string[]): boolean {
  for (let skip = 0; skip <= MAX_TAG_PUNCTUATION; skip += 1) {
    if (skip > 0) {
      const between = after[skip - 1];
      if (between === undefined || between === '<' || between === '>' || /[\p{L}\p{N}]/u.test(between)) return false;
    }
    if (words.some((word) => spells(after, skip, word))) return true;
  }
  return false;
}

/**
 * Up to `count` visible characters from `from`, invisible ones skipped however many. Each
 * scan starts at a '<' and stops after `count` visible characters, so a run of invisible
 * characters is crossed by at most `count` scans: linear overall.
 */
function visibleAhead(text: string, from: number, count: number): string[] {
  const out: string[] = [];
  for (let i = from; i < text.length && out.length < count;) {
    const code = text.codePointAt(i) as number;
    const width = code > 0xffff ? 2 : 1;
    for (const ch of foldChar(text.slice(i, i + width))) out.push(ch);
    i += width;
  }
  return out;
}

/** Code-unit indexes of the '<'-like characters of `text` that open one of `words` as a reader sees it. */
function tagOpenings(text: string, words: readonly string[]): number[] {
  const need = MAX_TAG_PUNCTUATION + Math.max(...words.map((word) => word.length));
  const openings: number[] = [];
  for (let i = 0; i < text.length;) {
    const code = text.codePointAt(i) as number;
    const width = code > 0xffff ? 2 : 1;
    const isLt = code === 0x3c || (code >= 0x80 && foldChar(text.slice(i, i + width)) === '<');
    if (isLt && opensTag(visibleAhead(text, i + width, need), words)) openings.push(i);
    i += width;
  }
  return openings;
}

function escapeChar(ch: string): string {
  return ch === '<' ? '&lt;' : `&#x${(ch.codePointAt(0) as number).toString(16).toUpperCase()};`;
}

/** `text` with every '<' (or look-alike) that reads as opening one of `words` (lower-case ASCII) written as an entity. */
export function neutralizeTags(text: string, words: readonly string[]): string {
  const openings = tagOpenings(text, words);
  if (openings.length === 0) return text;
  const parts: string[] = [];
  let last = 0;
  for (const at of openings) {
    const width = (text.codePointAt(at) as number) > 0xffff ? 2 : 1;
    parts.push(text.slice(last, at), escapeChar(text.slice(at, at + width)));
    last = at + width;
  }
  parts.push(text.slice(last));
  return parts.join('');
}

const ENTITY = /&lt;|&#x([0-9A-F]{1,6});/g;

/**
 * The reverse, for a reader of our own framing (the local summarizer, llm-sim): each entity
 * that, as its character, would open a protected word becomes that character again. A text
 * that held such an entity before escaping reads back with the character there: a loss in
 * the reader's copy only, never in what is stored.
 */
export function restoreTags(text: string, words: readonly string[]): string {
  if (!text.includes('&lt;') && !text.includes('&#x')) return text;
  // the text with every candidate entity read as its character, and where each one stands
  const parts: string[] = [];
  const entities = new Map<number, string>();
  let length = 0;
  let last = 0;
  for (const match of text.matchAll(ENTITY)) {
    const ch = match[0] === '&lt;' ? '<' : String.fromCodePoint(parseInt(match[1] as string, 16));
    if (match[0] !== '&lt;' && !LT_LIKE.has(ch)) continue;
    const before = text.slice(last, match.index);
    parts.push(before, ch);
    length += before.length;
    entities.set(length, match[0]);
    length += ch.length;
    last = match.index + match[0].length;
  }
  if (entities.size === 0) return text;
  parts.push(text.slice(last));
  const candidate = parts.join('');
  const opening = new Set(tagOpenings(candidate, words));
  const out: string[] = [];
  let from = 0;
  for (const [at, entity] of entities) {
    const width = (candidate.codePointAt(at) as number) > 0xffff ? 2 : 1;
    out.push(candidate.slice(from, at), opening.has(at) ? candidate.slice(at, at + width) : entity);
    from = at + width;
  }
  out.push(candidate.slice(from));
  return out.join('');
}
