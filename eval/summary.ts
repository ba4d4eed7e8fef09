import type { ContextMeasures, RetentionSummary } from './measure.js';
import { IDENTIFIER_KINDS, type IdentifierKind } from './metrics.js';
import type { CaseReport, MeasureRow } from './run-case.js';

/** Aggregates and the goal check of a run, shared by the report (pure functions over the results). */

export const GOAL = {
  /** identifier retention after the gate */
  retention: 0.99,
  /** 1 − context after / before */
  reduction: 0.7,
  /** "comparable size": summary tokens within this share of the peer's */
  sizeTolerance: 0.5,
} as const;

export type Measured = MeasureRow & { measures: ContextMeasures };

export function measured(rows: readonly MeasureRow[]): Measured[] {
  return rows.filter((r): r is Measured => r.measures !== null);
}

export function meetsGoal(m: ContextMeasures): boolean {
  return m.retentionAfterGate.ratio >= GOAL.retention && m.reduction >= GOAL.reduction;
}

/** Summary sizes within GOAL.sizeTolerance of each other (relative to the peer's). */
export function comparableSize(m: ContextMeasures, peer: ContextMeasures): boolean {
  return Math.abs(m.summaryTokens - peer.summaryTokens) <= GOAL.sizeTolerance * peer.summaryTokens;
}

export interface Pooled {
  runs: number;
  found: number;
  total: number;
  /** pooled: all found / all total */
  ratio: number;
}

/** Pools the retention of several runs (identifier counts summed, so big spans weigh more). */
export function pool(retentions: readonly RetentionSummary[]): Pooled {
  const found = retentions.reduce((sum, r) => sum + r.found, 0);
  const total = retentions.reduce((sum, r) => sum + r.total, 0);
  return { runs: retentions.length, found, total, ratio: total === 0 ? 1 : found / total };
}

export function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

export interface VariantAggregate {
  variant: string;
  label: string;
  runs: number;
  beforeGate: Pooled;
  beforeResummary: Pooled | null;
  afterGate: Pooled;
  meanReduction: number | null;
  meanSummaryTokens: number | null;
  instructions: { covered: number; total: number };
  requests: { covered: number; total: number };
  goalMet: number;
}

/** One line per variant over the cases given, in first-seen order. */
export function aggregateByVariant(cases: readonly CaseReport[]): VariantAggregate[] {
  const groups = new Map<string, Measured[]>();
  for (const c of cases) for (const row of measured(c.rows)) groups.set(row.variant, [...(groups.get(row.variant) ?? []), row]);
  return [...groups.entries()].map(([variant, rows]) => {
    const m = rows.map((r) => r.measures);
    const resummary = m.map((x) => x.retentionBeforeResummary).filter((x): x is RetentionSummary => x !== null);
    return {
      variant,
      label: rows[0]?.label ?? variant,
      runs: rows.length,
      beforeGate: pool(m.map((x) => x.retentionBeforeGate)),
      beforeResummary: resummary.length === m.length ? pool(resummary) : null,
      afterGate: pool(m.map((x) => x.retentionAfterGate)),
      meanReduction: mean(m.map((x) => x.reduction)),
      meanSummaryTokens: mean(m.map((x) => x.summaryTokens)),
      instructions: { covered: sum(m, (x) => x.instructions.covered), total: sum(m, (x) => x.instructions.total) },
      requests: { covered: sum(m, (x) => x.requests.covered), total: sum(m, (x) => x.requests.total) },
      goalMet: m.filter(meetsGoal).length,
    };
  });
}

function sum<T>(items: readonly T[], pick: (item: T) => number): number {
  return items.reduce((total, item) => total + pick(item), 0);
}

/** Retention per identifier kind, pooled over the given rows (after the gate). */
export function retentionByKind(rows: readonly Measured[]): Partial<Record<IdentifierKind, Pooled>> {
  const out: Partial<Record<IdentifierKind, Pooled>> = {};
  for (const kind of IDENTIFIER_KINDS) {
    const counts = rows.map((r) => r.measures.retentionAfterGate.byKind[kind]).filter((x) => x !== undefined);
    if (counts.length === 0) continue;
    const found = counts.reduce((s, c) => s + c.found, 0);
    const total = counts.reduce((s, c) => s + c.total, 0);
    if (total > 0) out[kind] = { runs: counts.length, found, total, ratio: found / total };
  }
  return out;
}

export interface PeerComparison {
  caseId: string;
  peer: ContextMeasures;
  variant: string;
  ours: ContextMeasures;
  comparable: boolean;
  /** ours − peer, after the gate */
  retentionGain: number;
}

/** Every compactd row of a case with a peer, set against the peer's summary. */
export function peerComparisons(cases: readonly CaseReport[]): PeerComparison[] {
  return cases.flatMap((c) => {
    const rows = measured(c.rows);
    const peer = rows.find((r) => r.engine === 'peer');
    if (!peer) return [];
    return rows
      .filter((r) => r.engine !== 'peer')
      .map((r) => ({
        caseId: c.id,
        peer: peer.measures,
        variant: r.variant,
        ours: r.measures,
        comparable: comparableSize(r.measures, peer.measures),
        retentionGain: r.measures.retentionAfterGate.ratio - peer.measures.retentionAfterGate.ratio,
      }));
  });
}
