import { createHash } from 'node:crypto';

/**
 * The eval's two halves, so that what is tuned is also measured on cases it was not tuned
 * on. The rule: within each collection (Claude Code sessions, mini-swe-agent runs, τ-bench
 * conversations), the cases are ordered by the SHA-256 of their id (`cc-258c7280`,
 * `swe-psf__requests-6028`, `tau-task-3-trial-0`; lowercase hex, ascending); the first half,
 * rounded up, is the **development** half and the rest is **held out**. Changes to the
 * ledger, the summarizer or their budgets are tuned looking at the development half only;
 * the held-out half is read to report. The halves depend on the collection's full list of
 * case ids only, never on the run: a quick run's cases keep the half they have in a full run.
 */

export type EvalHalf = 'development' | 'held-out';

export const EVAL_HALVES: readonly EvalHalf[] = ['development', 'held-out'];

export function splitKey(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

/** The half of every id of one collection (each id once; the order they come in does not matter). */
export function splitHalves(ids: readonly string[]): Map<string, EvalHalf> {
  const ordered = [...new Set(ids)].map((id) => ({ id, key: splitKey(id) })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const development = Math.ceil(ordered.length / 2);
  return new Map(ordered.map(({ id }, index) => [id, index < development ? 'development' : 'held-out']));
}
