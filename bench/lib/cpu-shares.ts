import { round, spread } from './stats.js';

/** CPU by process per unit of work (a compaction, a message), the median of several runs. */
export interface CpuShares {
  roles: string[];
  /** median per role, in the runs' unit */
  median(role: string): number;
  /** the sum of the medians */
  total: number;
  /** rows for a result table: process, CPU per unit, share of the total */
  rows: Array<Array<string | number>>;
}

export function cpuShares(runs: ReadonlyArray<Record<string, number>>, digits = 1): CpuShares {
  const roles = Object.keys(runs[0] ?? {});
  const median = (role: string) => spread(runs.map((r) => r[role] ?? Number.NaN)).median;
  const total = roles.reduce((sum, role) => sum + median(role), 0);
  const rows: Array<Array<string | number>> = roles.map((role) => [
    role,
    round(median(role), digits),
    `${round((median(role) / total) * 100, 0)}%`,
  ]);
  rows.push(['all', round(total, digits), '100%']);
  return { roles, median, total, rows };
}

/** CPU seconds by role over a run → CPU per unit (`scale`: 1000 for ms, 1e6 for µs). */
export function perUnit(seconds: Record<string, number>, units: number, scale: number): Record<string, number> {
  return Object.fromEntries(Object.entries(seconds).map(([role, s]) => [role, (s * scale) / units]));
}
