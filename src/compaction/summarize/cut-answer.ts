import { SECTIONS } from './prompt.js';

/**
 * An answer the provider stopped at its runaway cap (`max_tokens`, set well above the length
 * the directive asks for) has already written more than it was asked to. When it still holds
 * every section of the summary, it is kept, trimmed to its last complete line: the state
 * ledger and the identifier gate complete what the cut tail held (files, commands, errors,
 * the identifiers the archive keeps). Asking again in series would double the step's wall
 * time for the few lines the cut took. An answer that never reached its last section is not
 * a summary yet.
 */

const headingPattern = (name: string): RegExp => new RegExp(`^#{1,6}\\s*${name.replace(/ /g, '\\s+')}\\b`, 'im');

/** The cut answer to keep (its partial last line dropped), or null when a section is missing or empty. */
export function keepCutAnswer(text: string): string | null {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  // the last line was being written when the cap hit, unless the text ends with a line break
  const complete = text.endsWith('\n') ? lines : lines.slice(0, -1);
  const kept = complete.join('\n').trimEnd();
  if (!holdsEverySection(kept)) return null;
  return kept;
}

/** Every section heading present, in order, each followed by at least one line of content. */
export function holdsEverySection(text: string): boolean {
  let from = 0;
  const starts: number[] = [];
  for (const name of SECTIONS) {
    const match = headingPattern(name).exec(text.slice(from));
    if (match === null) return false;
    starts.push(from + match.index);
    from += match.index + match[0].length;
  }
  return starts.every((start, i) => {
    const section = text.slice(start, starts[i + 1] ?? text.length);
    return section
      .split('\n')
      .slice(1)
      .some((line) => line.trim() !== '');
  });
}
