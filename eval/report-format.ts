import type { CoverageSummary, RetentionSummary } from './measure.js';
import type { Pooled } from './summary.js';

/** Markdown helpers of the report. */

export function pct(ratio: number | null | undefined, digits = 1): string {
  return ratio === null || ratio === undefined ? '–' : `${(ratio * 100).toFixed(digits)}%`;
}

export function int(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : Math.round(value).toLocaleString('en-US');
}

export function retention(r: RetentionSummary | Pooled | null | undefined): string {
  return r ? `${pct(r.ratio)} (${r.found}/${r.total})` : '–';
}

export function covered(c: CoverageSummary | { covered: number; total: number }): string {
  return c.total === 0 ? 'n/a (none)' : `${c.covered}/${c.total}`;
}

function cell(value: string): string {
  return value.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const head = `| ${headers.map(cell).join(' | ')} |`;
  const rule = `|${headers.map(() => '---').join('|')}|`;
  return [head, rule, ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`)].join('\n');
}

/** An identifier as inline code, shortened for a table or a list. */
export function code(value: string, max = 90): string {
  const flat = value.replace(/\s+/g, ' ');
  const short = flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  return `\`${short.replace(/`/g, "'")}\``;
}
