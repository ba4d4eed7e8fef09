/** Order statistics for the report: every figure is a median with its spread over runs. */

export interface Spread {
  n: number;
  median: number;
  min: number;
  max: number;
  /** 10th and 90th percentiles (nearest rank); equal to min/max for fewer than 10 runs */
  p10: number;
  p90: number;
}

export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  const a = sorted[low] as number;
  const b = sorted[high] as number;
  return a + (b - a) * (position - low);
}

export function spread(values: readonly number[]): Spread {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return {
    n: sorted.length,
    median: quantile(sorted, 0.5),
    min: sorted[0] ?? Number.NaN,
    max: sorted.at(-1) ?? Number.NaN,
    p10: quantile(sorted, 0.1),
    p90: quantile(sorted, 0.9),
  };
}

export const round = (value: number, digits = 1): number => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};

/** Total length of the union of [start, end] intervals (time during which at least one was open). */
export function unionMs(intervals: ReadonlyArray<readonly [number, number]>): number {
  const sorted = [...intervals].filter(([s, e]) => e >= s).sort((a, b) => a[0] - b[0]);
  let total = 0;
  let curStart = Number.NaN;
  let curEnd = Number.NaN;
  for (const [s, e] of sorted) {
    if (Number.isNaN(curStart) || s > curEnd) {
      if (!Number.isNaN(curStart)) total += curEnd - curStart;
      curStart = s;
      curEnd = e;
    } else if (e > curEnd) curEnd = e;
  }
  if (!Number.isNaN(curStart)) total += curEnd - curStart;
  return total;
}

/** A median with its range for a table cell: `12.3 [11.8–13.0]`, or the value alone for one run. */
export function rangeText(values: readonly number[]): string {
  const s = spread(values);
  if (s.n === 0) return 'n/a';
  const digits = s.median >= 10 ? 1 : 2;
  return s.n > 1 ? `${round(s.median, digits)} [${round(s.min, digits)}–${round(s.max, digits)}]` : `${round(s.median, digits)}`;
}
