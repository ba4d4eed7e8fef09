import { capLine } from './command-line.js';
import { relativeTo } from './paths.js';
import type { Ledger, LedgerCommand, LedgerFile } from './schema.js';

/**
 * What the agent did just before the cut: its last commands, distinct, newest last, each
 * with how its latest run ended, and the files it touched last. A summarizer condensing tool
 * calls drops most of them, and an agent that does not know what it had just run runs it
 * again, so the ledger carries them itself (rendered as the state's last part to give way).
 */

/** The error line shown after a failed command: enough to recognize it; the whole line is in `Open errors` and the archive. */
const MAX_OUTCOME_ERROR_CHARS = 120;

/** Latest run first: by seq, then by place among the calls of one message. */
function byLatestRun(a: LedgerCommand, b: LedgerCommand): number {
  return b.lastSeq - a.lastSeq || (b.lastAt ?? 0) - (a.lastAt ?? 0);
}

/** The `max` commands run last, each once (a command is keyed by its line), newest last. */
export function recentCommands(ledger: Ledger, max: number): LedgerCommand[] {
  return [...ledger.commands].sort(byLatestRun).slice(0, Math.max(0, max)).reverse();
}

/** The error line of a command's latest run, when it failed and printed one. */
function latestErrorLine(ledger: Ledger, command: LedgerCommand): string | undefined {
  return ledger.errors.find((e) => e.targetKind === 'command' && e.target === command.line && e.seq === command.lastSeq)?.line;
}

/** How a command's latest run ended: `ok`, `exit 2: <error line>`, `failed: <error line>`, `no result`. */
export function commandOutcome(ledger: Ledger, command: LedgerCommand): string {
  if (command.outcome === 'ok') return 'ok';
  if (command.outcome === 'unknown') return 'no result';
  const status = command.exitCode === undefined ? 'failed' : `exit ${command.exitCode}`;
  const error = latestErrorLine(ledger, command);
  return error === undefined ? status : `${status}: ${capLine(error, MAX_OUTCOME_ERROR_CHARS)}`;
}

/** One recent command as the state shows it: the line as typed, its outcome and seq. */
export function recentCommandText(ledger: Ledger, command: LedgerCommand): string {
  return `\`${command.line}\` → ${commandOutcome(ledger, command)} (seq ${command.lastSeq})`;
}

/** What the latest call that touched a file did to it: its latest change when that was the latest call, else a read. */
export function lastAction(file: LedgerFile): string {
  return file.changedSeq === file.lastSeq && file.lastChange !== undefined ? file.lastChange : 'read';
}

/** The `max` files touched last (reads included), newest last. */
export function recentFiles(ledger: Ledger, max: number): LedgerFile[] {
  return [...ledger.files]
    .sort((a, b) => b.lastSeq - a.lastSeq || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .slice(0, Math.max(0, max))
    .reverse();
}

export function recentFileText(file: LedgerFile, cwd: string | undefined): string {
  return `${relativeTo(cwd, file.path)} (${lastAction(file)})`;
}
