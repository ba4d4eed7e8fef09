import { round, type Spread, spread } from './stats.js';

/** The JSON shape every scenario reports (bench/results/<date>.json), rendered into BENCH.md. */

export interface Target {
  metric: string;
  op: '<=' | '>=';
  threshold: number;
  value: number;
  unit: string;
  met: boolean;
  /** for a missed target: what the profile showed */
  bottleneck?: string;
}

export interface Figure {
  label: string;
  unit: string;
  stats: Spread;
}

export interface Table {
  title: string;
  columns: string[];
  rows: Array<Array<string | number>>;
}

export interface ScenarioResult {
  id: string;
  title: string;
  status: 'measured' | 'not measured';
  /** why, when not measured */
  reason?: string;
  /** what was measured, on what: profile, transcript, sizes, runs */
  setup: Record<string, string | number | boolean>;
  figures: Figure[];
  tables: Table[];
  targets: Target[];
  notes: string[];
  durationMs: number;
}

export function figure(label: string, unit: string, values: readonly number[]): Figure {
  const s = spread(values);
  return {
    label,
    unit,
    stats: { ...s, median: round(s.median, 3), min: round(s.min, 3), max: round(s.max, 3), p10: round(s.p10, 3), p90: round(s.p90, 3) },
  };
}

export function target(metric: string, op: '<=' | '>=', threshold: number, value: number, unit = ''): Target {
  const met = Number.isFinite(value) && (op === '<=' ? value <= threshold : value >= threshold);
  return { metric, op, threshold, value: round(value, 3), unit, met };
}

export function emptyScenario(id: string, title: string): ScenarioResult {
  return { id, title, status: 'measured', setup: {}, figures: [], tables: [], targets: [], notes: [], durationMs: 0 };
}

/** Formats a median with its range, e.g. `812 ms (780–840, n=5)`. */
export function describe(f: Figure): string {
  const s = f.stats;
  if (s.n === 0) return 'no data';
  const range = s.n > 1 ? ` (${fmt(s.min)}–${fmt(s.max)}, n=${s.n})` : ' (n=1)';
  return `${fmt(s.median)} ${f.unit}${range}`;
}

export function fmt(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  if (abs >= 100) return String(Math.round(value));
  if (abs >= 10) return value.toFixed(1);
  return value.toFixed(2);
}
