import { type Ledger, type LedgerName, type LedgerNameKind, ledgerNames, relativeTo } from '../ledger/index.js';
import { normalizeSpace } from '../summarize/index.js';
import { type SearchableText, searchableText } from './gram-sketch.js';

/**
 * What a compaction's context no longer holds (SPEC §5.9): the names of its span — paths,
 * commands, error lines, ids, as the span's ledger holds them — that neither the new
 * clip-archive nor any active message carries. They are one `recall` away in the archive; a
 * platform (and the inspector) lists them with a recall link each.
 */

/** At most this many names are recorded per compaction (the counts cover them all). */
export const FORGOTTEN_MAX_NAMES = 2_000;

export type ForgottenCounts = { total: number; byKind: Record<LedgerNameKind, number> };

/** The span's names, once each, in the ledger's order (files, commands, errors, ids). */
export function spanNames(ledger: Ledger | null): LedgerName[] {
  return ledger ? ledgerNames(ledger) : [];
}

/** The forms a context may hold a name in: a path also as shown relative to the working directory. */
export function heldForms(name: LedgerName, cwd: string | null): string[] {
  const forms = [normalizeSpace(name.name).trim()];
  if (name.kind === 'path' && cwd) forms.push(relativeTo(cwd, name.name));
  return forms.filter((form) => form.length > 0);
}

/**
 * The names none of whose forms the text contains (whitespace-insensitive). The text may come
 * prepared (`searchableText`), so a commit searches its clip-archive's one sketch for every
 * name: one full scan each blocked the event loop for seconds at 1,000 chunks.
 */
export function namesMissingFrom(names: readonly LedgerName[], text: string | SearchableText, cwd: string | null): LedgerName[] {
  const searchable = typeof text === 'string' ? searchableText(text) : text;
  return names.filter((name) => !heldForms(name, cwd).some((form) => searchable.contains(form)));
}

export function countForgotten(names: readonly LedgerName[]): ForgottenCounts {
  const byKind: Record<LedgerNameKind, number> = { path: 0, command: 0, error: 0, id: 0 };
  for (const name of names) byKind[name.kind] += 1;
  return { total: names.length, byKind };
}
