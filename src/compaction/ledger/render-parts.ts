import { neutralizeTags } from '../tag-escape.js';
import { capLine } from './command-line.js';
import { isChanged } from './counts.js';
import { relativeTo } from './paths.js';
import { recentCommands, recentCommandText, recentFiles, recentFileText } from './recent-actions.js';
import type { Ledger, LedgerAgent, LedgerError, LedgerFile, LedgerImage } from './schema.js';

/**
 * The parts of a rendered ledger, each a heading and its items, already capped and escaped.
 * Items are selected newest and open first; `dropOrder` says which end of a part's items is
 * the least important, so a tight budget trims there first.
 */

export interface LedgerCaps {
  filesChanged: number;
  filesRead: number;
  openErrors: number;
  resolvedErrors: number;
  constraints: number;
  requests: number;
  openTasks: number;
  /** the last distinct commands, shown with how their latest run ended */
  recentCommands: number;
  /** the files touched last */
  recentFiles: number;
  /** the newest images, by reference */
  images: number;
  /** the newest sub-agents, running ones included */
  agents: number;
}

export const DEFAULT_LEDGER_CAPS: LedgerCaps = {
  filesChanged: 30,
  filesRead: 25,
  openErrors: 8,
  resolvedErrors: 5,
  constraints: 12,
  requests: 3,
  openTasks: 15,
  recentCommands: 5,
  recentFiles: 5,
  images: 5,
  agents: 6,
};

export type PartKey =
  | 'filesChanged'
  | 'filesRead'
  | 'openErrors'
  | 'resolvedErrors'
  | 'lastFailingCommand'
  | 'constraints'
  | 'requests'
  | 'openTasks'
  | 'recentCommands'
  | 'recentFiles'
  | 'images'
  | 'agents';

export interface Part {
  key: PartKey;
  heading: string;
  /** a one-line list (`Read: a, b, c`) rather than one line per item */
  inline: boolean;
  items: string[];
  /** items the ledger holds for this part, shown or not */
  total: number;
  /** which end of `items` goes first when the budget is tight */
  dropFrom: 'start' | 'end';
}

/** The longest an item line may be: one long path or sentence cannot take the whole budget. */
const MAX_ITEM_CHARS = 320;

/**
 * How content is made safe inside the XML-ish delimiters the ledger is framed in:
 * `entities` writes every `&`, `<`, `>` as an entity (no delimiter can be forged, whatever
 * it is); `tags` leaves commands as typed (`2>&1` stays copyable) and only neutralizes a
 * `<` that would open one of the protected tag words.
 */
export type LedgerEscape = 'entities' | 'tags';

export interface TextStyle {
  cwd?: string | undefined;
  protectTags?: readonly string[] | undefined;
  escape?: LedgerEscape | undefined;
}

export function escapeLedgerText(text: string, protectTags: readonly string[] = [], escape: LedgerEscape = 'entities'): string {
  const escaped = escape === 'entities' ? text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;') : text;
  return protectTags.length === 0 ? escaped : neutralizeTags(escaped, protectTags);
}

function cleanItem(text: string, style: TextStyle): string {
  return escapeLedgerText(capLine(text.replace(/\s+/g, ' ').trim(), MAX_ITEM_CHARS), style.protectTags, style.escape);
}

const newestFirst = <T>(items: readonly T[], seq: (item: T) => number) => [...items].sort((a, b) => seq(b) - seq(a));

function actionsText(file: LedgerFile): string {
  const parts = (['created', 'edited', 'moved', 'deleted'] as const).flatMap((action) => {
    const count = file.actions[action];
    return count === undefined ? [] : [count > 1 ? `${action} ×${count}` : action];
  });
  return parts.join(', ');
}

function fileItem(file: LedgerFile, style: TextStyle): string {
  const gist = file.gist === undefined ? '' : ` (${file.gist})`;
  const moved = file.movedTo === undefined ? '' : ` → ${relativeTo(style.cwd, file.movedTo)}`;
  return cleanItem(`${relativeTo(style.cwd, file.path)}: ${actionsText(file)}${gist}${moved}`, style);
}

function imageItem(image: LedgerImage, style: TextStyle): string {
  const from = image.from === 'tool' ? 'a tool result' : `the ${image.from}`;
  return cleanItem(`${image.ref}${image.description === '' ? '' : `: ${image.description}`} (from ${from}, seq ${image.seq})`, style);
}

function agentItem(agent: LedgerAgent, style: TextStyle): string {
  const type = agent.type === undefined ? '' : ` (${agent.type})`;
  const result = agent.result === undefined ? '' : ` → ${agent.result}`;
  return cleanItem(`[${agent.status}] ${agent.task}${type}${result} (seq ${agent.seq})`, style);
}

function errorItem(error: LedgerError, style: TextStyle): string {
  const target =
    error.target === '' ? '' : error.targetKind === 'path' ? ` ${relativeTo(style.cwd, error.target)}` : ` \`${error.target}\``;
  return cleanItem(`${error.line} (${error.tool}${target}, seq ${error.seq})`, style);
}

/** The first `cap` items of a list ordered most important first. */
function part(key: PartKey, heading: string, all: readonly string[], cap: number, inline = false): Part {
  return { key, heading, inline, items: all.slice(0, cap), total: all.length, dropFrom: 'end' };
}

/** Items chosen and ordered newest last by the caller; the oldest gives way first. */
function newestLast(key: PartKey, heading: string, items: string[], total: number, inline = false): Part {
  return { key, heading, inline, items, total, dropFrom: 'start' };
}

/** Newest `cap` of a list, shown oldest first (newest last, as the user said them). */
function newestShownInOrder(key: PartKey, heading: string, all: readonly string[], cap: number): Part {
  return { key, heading, inline: false, items: all.slice(Math.max(0, all.length - cap)), total: all.length, dropFrom: 'start' };
}

export function ledgerParts(ledger: Ledger, caps: LedgerCaps, style: TextStyle): Part[] {
  // files still where they were left come first, newest change first; deleted and moved-away ones after
  const gone = (f: LedgerFile) => f.lastChange === 'deleted' || f.lastChange === 'moved';
  const byChange = newestFirst(ledger.files.filter(isChanged), (f) => f.changedSeq ?? f.lastSeq);
  const changed = [...byChange.filter((f) => !gone(f)), ...byChange.filter(gone)].map((f) => fileItem(f, style));
  const read = newestFirst(
    ledger.files.filter((f) => !isChanged(f)),
    (f) => f.lastSeq,
  ).map((f) => cleanItem(relativeTo(style.cwd, f.path), style));
  const open = newestFirst(
    ledger.errors.filter((e) => !e.resolved),
    (e) => e.seq,
  ).map((e) => errorItem(e, style));
  const resolved = newestFirst(
    ledger.errors.filter((e) => e.resolved),
    (e) => e.seq,
  ).map((e) => errorItem(e, style));
  const recent = recentCommands(ledger, caps.recentCommands);
  const failing = newestFirst(
    ledger.commands.filter((c) => c.outcome === 'failed'),
    (c) => c.lastSeq,
  )[0];
  const exit = failing?.exitCode === undefined ? '' : `exit ${failing.exitCode}, `;
  // a failing command among the recent ones is shown there, with its outcome
  const shownAsRecent = recent.some((c) => c.line === failing?.line);
  const failingItem =
    failing === undefined || shownAsRecent ? [] : [cleanItem(`\`${failing.line}\` (${exit}seq ${failing.lastSeq})`, style)];
  const tasks = ledger.tasks?.items ?? [];
  const openTasks = [...tasks.filter((t) => t.status === 'in_progress'), ...tasks.filter((t) => t.status === 'pending')].map((t) =>
    cleanItem(`[${t.status === 'in_progress' ? 'in progress' : 'pending'}] ${t.text}`, style),
  );
  const completed = tasks.length - openTasks.length;
  return [
    part('filesChanged', 'Files changed:', changed, caps.filesChanged),
    part('filesRead', 'Read:', read, caps.filesRead, true),
    part('openErrors', 'Open errors:', open, caps.openErrors),
    part('resolvedErrors', 'Resolved errors:', resolved, caps.resolvedErrors),
    part('lastFailingCommand', 'Last failing command:', failingItem, 1, true),
    newestShownInOrder(
      'constraints',
      'User constraints (verbatim):',
      ledger.instructions.constraints.map((s) => cleanItem(s.text, style)),
      caps.constraints,
    ),
    newestShownInOrder(
      'requests',
      'Latest requests:',
      ledger.instructions.requests.map((s) => cleanItem(s.text, style)),
      caps.requests,
    ),
    part('openTasks', completed > 0 ? `Open tasks (${completed} completed):` : 'Open tasks:', openTasks, caps.openTasks),
    newestShownInOrder(
      'agents',
      'Sub-agents (newest last):',
      ledger.agents.map((a) => agentItem(a, style)),
      caps.agents,
    ),
    newestLast(
      'recentCommands',
      'Recent actions (newest last):',
      recent.map((c) => cleanItem(recentCommandText(ledger, c), style)),
      ledger.commands.length,
    ),
    newestLast(
      'recentFiles',
      'Files touched last:',
      recentFiles(ledger, caps.recentFiles).map((f) => cleanItem(recentFileText(f, style.cwd), style)),
      ledger.files.length,
      true,
    ),
    newestShownInOrder(
      'images',
      'Images (the archive holds each; recall by its img: reference):',
      ledger.images.map((i) => imageItem(i, style)),
      caps.images,
    ),
  ];
}
