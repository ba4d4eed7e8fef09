/**
 * How a reader (a person or a model) might see delimiters in a clip-archive: written here
 * independently of src/compaction/context/clip-archive.ts, with its own list of look-alikes, so the
 * injection suite does not grade the escaper with the escaper's own tables.
 */

// Letters that render (nearly) like the Latin letters of the delimiters, from the Unicode
// confusables data: Cyrillic, Greek, Armenian, Coptic, small capitals, mathematical forms.
const LOOKALIKES: Record<string, string> = {
  '\u0441': 'c',
  '\u03F2': 'c',
  '\u1D04': 'c',
  '\u2CA5': 'c',
  '\u043E': 'o',
  '\u03BF': 'o',
  '\u0585': 'o',
  '\u1D0F': 'o',
  '\u2C9F': 'o',
  '\u0D20': 'o',
  '\u043C': 'm',
  '\u1D0D': 'm',
  '\u0440': 'p',
  '\u03C1': 'p',
  '\u2374': 'p',
  '\u1D18': 'p',
  '\u2CA3': 'p',
  '\u0430': 'a',
  '\u0251': 'a',
  '\u03B1': 'a',
  '\u1D00': 'a',
  '\u0442': 't',
  '\u03C4': 't',
  '\u1D1B': 't',
  '\u0501': 'd',
  '\u1D05': 'd',
  '\u0455': 's',
  '\u0445': 'x',
  '\u0443': 'y',
  '\u0435': 'e',
  '\u0456': 'i',
  '\u04CF': 'l',
  '\u0280': 'r',
  '\u1D1C': 'u',
  '\u2039': '<',
  '\u3008': '<',
  '\u27E8': '<',
  '\u2329': '<',
  '\u1438': '<',
  '\u02C2': '<',
  '\uFE64': '<',
  '\u276E': '<',
  '\u2215': '/',
  '\u2044': '/',
  '\u29F8': '/',
  '\u2571': '/',
  '\u30CE': '/',
};

/** NFKC, invisible characters, combining marks and whitespace dropped, look-alikes mapped, lower case. */
export function readerView(text: string): string {
  let out = '';
  for (const ch of text.normalize('NFKC')) {
    if (/[\p{Cf}\p{Mn}\p{Zs}\s\u115F\u1160\u3164]/u.test(ch)) continue;
    out += LOOKALIKES[ch] ?? ch;
  }
  return out.toLowerCase();
}

/** How many times each delimiter appears to a reader. */
export function delimiterCounts(
  text: string,
): Record<'archiveOpen' | 'archiveClose' | 'summaryOpen' | 'summaryClose' | 'stateOpen' | 'stateClose', number> {
  const view = readerView(text);
  const count = (needle: string) => view.split(needle).length - 1;
  return {
    archiveOpen: count('<compactd-archive'),
    archiveClose: count('</compactd-archive'),
    summaryOpen: count('<compactd-summary'),
    summaryClose: count('</compactd-summary'),
    stateOpen: count('<compactd-state'),
    stateClose: count('</compactd-state'),
  };
}
