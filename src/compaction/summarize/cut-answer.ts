import { type SectionName, SECTIONS } from './prompt.js';

/**
 * An answer the provider stopped at its cap (`max_tokens`) has already written more than it
 * was asked to, and asking again in series would double the step's wall time (a model told
 * to keep every path and error may fill any cap again). So a cut answer is kept, trimmed to
 * its last complete line, whatever the cap cut off:
 * - when it still holds every section, as it is: the state ledger and the identifier gate
 *   complete what the cut tail held (files, commands, errors, the identifiers the archive keeps);
 * - when the cap came before its last sections, those sections are taken from the local
 *   extractor's summary of the same source (no call), after what the model wrote, verbatim.
 *   The clip-archive that ends over its budget for it is brought back within it by the
 *   consolidation that follows the commit, off the agent's path.
 */

const headingPattern = (name: string): RegExp => new RegExp(`^#{1,6}\\s*${name.replace(/ /g, '\\s+')}\\b`, 'im');
const ANY_HEADING = /^#{1,6}\s/;

/** The answer's complete lines: the last one was being written when the cap hit, unless the text ends with a line break. */
export function completeLines(text: string): string {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const complete = text.endsWith('\n') ? lines : lines.slice(0, -1);
  return complete.join('\n').trimEnd();
}

/** The cut answer to keep as it is (its partial last line dropped), or null when a section is missing or empty. */
export function keepCutAnswer(text: string): string | null {
  const kept = completeLines(text);
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

/**
 * The sections a cut answer lacks: those whose heading it never wrote, and the last one when
 * the cap came right after its heading (nothing under it yet).
 */
export function sectionsCutOff(cut: string): SectionName[] {
  const kept = withoutBareLastHeading(completeLines(cut));
  return SECTIONS.filter((name) => !headingPattern(name).test(kept));
}

export interface CompletedAnswer {
  text: string;
  /** the sections taken from `filler`, in order (none when the answer held them all) */
  completed: SectionName[];
}

/**
 * The cut answer made whole: its complete lines verbatim, then each section it lacks as
 * `filler` (a summary of the same source in the same sections) writes it — or a `- none`
 * line when the filler has no such section either. Pure.
 */
export function completeCutAnswer(cut: string, filler: string): CompletedAnswer {
  const kept = withoutBareLastHeading(completeLines(cut));
  const missing = SECTIONS.filter((name) => !headingPattern(name).test(kept));
  if (missing.length === 0) return { text: kept, completed: [] };
  const blocks = sectionBlocks(filler);
  const added = missing.map((name) => blocks.get(name) ?? `## ${name}\n- none`);
  return { text: [kept, ...added].filter((part) => part !== '').join('\n\n'), completed: missing };
}

/** Drops a last line that is a heading with nothing under it: the cap came right after it. */
function withoutBareLastHeading(text: string): string {
  const lines = text.split('\n');
  const last = lines.at(-1) ?? '';
  return ANY_HEADING.test(last) ? lines.slice(0, -1).join('\n').trimEnd() : text;
}

/** Each section of a summary, heading included, up to the next heading of any kind. */
function sectionBlocks(text: string): Map<SectionName, string> {
  const blocks = new Map<SectionName, string>();
  let current: SectionName | undefined;
  let lines: string[] = [];
  const flush = (): void => {
    const block = lines.join('\n').trimEnd();
    if (current !== undefined && !blocks.has(current) && block.split('\n').length > 1) blocks.set(current, block);
  };
  for (const line of text.replace(/\r\n/g, '\n').split('\n')) {
    if (ANY_HEADING.test(line)) {
      flush();
      current = SECTIONS.find((name) => headingPattern(name).test(line));
      lines = [line];
    } else lines.push(line);
  }
  flush();
  return blocks;
}
