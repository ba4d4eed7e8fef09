import type { CountTokens } from '../types.js';
import { DEFAULT_LEDGER_CAPS, type LedgerCaps, type LedgerEscape, ledgerParts, type Part, type PartKey } from './render-parts.js';
import type { Ledger } from './schema.js';

/**
 * The ledger as compact plain text for the head of the clip-archive (SPEC §5.7): files
 * changed, files read, open errors, the last failing command, the user's constraints and
 * latest requests, open tasks, the sub-agents started, then the recent actions (the last distinct commands with their
 * outcome, the files touched last) and the newest images by reference. Each part has a cap; within `maxTokens` the least
 * important items go first (files only read, resolved errors, the oldest of each part), the
 * recent actions last, and each part that lost items says how many with a line "(+N more in
 * the archive)". Never longer than `maxTokens` as `countTokens` counts; empty when not even
 * a line fits.
 */

export interface RenderLedgerOptions {
  maxTokens: number;
  countTokens: CountTokens;
  /** the session's working directory: paths under it are shown relative */
  cwd?: string;
  caps?: Partial<LedgerCaps>;
  /** tag words (the delimiter the text is framed in) whose look-alike openings are neutralized too, as tag-escape.ts does */
  protectTags?: readonly string[];
  /** `entities` (default): every `&`, `<`, `>` escaped; `tags`: text as typed but for a '<' opening a protected tag word (needs protectTags) */
  escape?: LedgerEscape;
}

const moreLine = (hidden: number) => `(+${hidden} more in the archive)`;

function renderPart(part: Part): string | null {
  const hidden = part.total - part.items.length;
  if (part.total === 0) return null;
  if (part.items.length === 0) return `${part.heading} ${moreLine(hidden)}`;
  if (part.inline) return `${part.heading} ${part.items.join(', ')}${hidden > 0 ? ` ${moreLine(hidden)}` : ''}`;
  return [part.heading, ...part.items.map((item) => `- ${item}`), ...(hidden > 0 ? [moreLine(hidden)] : [])].join('\n');
}

function renderParts(parts: readonly Part[]): string {
  return parts
    .map(renderPart)
    .filter((text): text is string => text !== null)
    .join('\n');
}

/**
 * Which part gives up an item first: the oldest images (each stays recallable by its reference
 * in the summary), the plain list of files read, resolved errors, then the
 * oldest changed files, constraints and requests, tasks, open errors; the last failing command last.
 */
const DROP_ORDER: readonly PartKey[] = [
  'images',
  'filesRead',
  'resolvedErrors',
  'agents',
  'filesChanged',
  'constraints',
  'requests',
  'openTasks',
  'openErrors',
  'lastFailingCommand',
];
/**
 * What the agent did just before the cut gives way only once every other part is gone: the
 * files touched last, then the oldest of the recent commands.
 */
const LAST_TO_GO: readonly PartKey[] = ['recentFiles', 'recentCommands'];
/** Items each part keeps while any other part can still give one up (the newest request, the newest open errors…). */
const KEEP: Readonly<Partial<Record<PartKey, number>>> = {
  filesChanged: 3,
  filesRead: 0,
  openErrors: 2,
  resolvedErrors: 0,
  lastFailingCommand: 1,
  constraints: 2,
  requests: 1,
  openTasks: 3,
};

function dropOne(parts: readonly Part[], order: readonly PartKey[], floor: (part: Part) => number): boolean {
  for (const key of order) {
    const part = parts.find((p) => p.key === key);
    if (part !== undefined && part.items.length > floor(part)) {
      part.items = part.dropFrom === 'end' ? part.items.slice(0, -1) : part.items.slice(1);
      return true;
    }
  }
  return false;
}

/** Drops a whole part (its heading and "more" line too), least important first. */
function dropPart(parts: readonly Part[], order: readonly PartKey[]): boolean {
  for (const key of order) {
    const part = parts.find((p) => p.key === key);
    if (part !== undefined && part.total > 0) {
      part.items = [];
      part.total = 0;
      return true;
    }
  }
  return false;
}

export function renderLedger(ledger: Ledger, options: RenderLedgerOptions): string {
  const caps = { ...DEFAULT_LEDGER_CAPS, ...options.caps };
  const parts = ledgerParts(ledger, caps, { cwd: options.cwd, protectTags: options.protectTags, escape: options.escape });
  const fits = () => options.countTokens(renderParts(parts)) <= options.maxTokens;
  while (!fits()) {
    if (dropOne(parts, DROP_ORDER, (part) => KEEP[part.key] ?? 0)) continue;
    if (dropOne(parts, DROP_ORDER, () => 0)) continue;
    if (dropPart(parts, DROP_ORDER)) continue;
    if (dropOne(parts, LAST_TO_GO, () => 0)) continue;
    if (!dropPart(parts, LAST_TO_GO)) return '';
  }
  return renderParts(parts);
}
