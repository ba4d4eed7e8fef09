import { extractIds } from '../identifier-sources.js';
import type { Ledger, LedgerFile } from './schema.js';

/** What a ledger holds, counted (the job result reports these) and named (what a context may no longer hold). */

export interface LedgerCounts {
  files: number;
  filesChanged: number;
  commands: number;
  commandsFailed: number;
  errorsOpen: number;
  errorsResolved: number;
  constraints: number;
  requests: number;
  openTasks: number;
}

export function isChanged(file: LedgerFile): boolean {
  return Object.keys(file.actions).some((action) => action !== 'read');
}

export function ledgerCounts(ledger: Ledger): LedgerCounts {
  const openErrors = ledger.errors.filter((e) => !e.resolved).length;
  return {
    files: ledger.files.length,
    filesChanged: ledger.files.filter(isChanged).length,
    commands: ledger.commands.length,
    commandsFailed: ledger.commands.filter((c) => c.outcome === 'failed').length,
    errorsOpen: openErrors,
    errorsResolved: ledger.errors.length - openErrors,
    constraints: ledger.instructions.constraints.length,
    requests: ledger.instructions.requests.length,
    openTasks: ledger.tasks?.items.filter((t) => t.status !== 'completed').length ?? 0,
  };
}

export type LedgerNameKind = 'path' | 'command' | 'error' | 'id';

export interface LedgerName {
  kind: LedgerNameKind;
  name: string;
}

/**
 * Every name the ledger holds, once each: file paths (move destinations included), command
 * lines, error lines, and the ids (codes, dates, e-mail addresses) the user's requests,
 * constraints and the todo list mention.
 */
export function ledgerNames(ledger: Ledger): LedgerName[] {
  const seen = new Set<string>();
  const names: LedgerName[] = [];
  const add = (kind: LedgerNameKind, name: string) => {
    const key = `${kind}\u0000${name}`;
    if (name.length === 0 || seen.has(key)) return;
    seen.add(key);
    names.push({ kind, name });
  };
  for (const file of ledger.files) {
    add('path', file.path);
    if (file.movedTo !== undefined) add('path', file.movedTo);
  }
  for (const command of ledger.commands) add('command', command.line);
  for (const error of ledger.errors) add('error', error.line);
  const texts = [...ledger.instructions.constraints, ...ledger.instructions.requests]
    .map((s) => s.text)
    .concat(ledger.tasks?.items.map((t) => t.text) ?? []);
  for (const text of texts) for (const id of extractIds(text)) add('id', id);
  return names;
}
