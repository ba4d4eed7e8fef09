import type { ContextMeasures, RetentionSummary } from './measure.js';
import { IDENTIFIER_KINDS, type IdentifierKind } from './metrics.js';
import { MAX_RECENT_COMMANDS } from './probes/recent.js';
import type { CaseReport, MeasureRow } from './run-case.js';
import { EVAL_HALVES, type EvalHalf } from './split.js';

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

/**
 * Continuation goals (issue 21 targets), checked per case on the default-policy `reset`
 * rows: the probe score, the lead over Claude Code's own summary of the same span, and the
 * clip-archive's size against that summary and against its budget.
 */
export const CONTINUATION_GOAL = {
  probeScore: 0.95,
  /** points above the peer's probe score, the target capped at 100% */
  aheadOfPeer: 0.25,
  /** clip-archive tokens ≤ this × the peer's summary tokens */
  peerSizeFactor: 1.25,
  /** the policy's `clipArchiveMaxTokens` default until the policy carries it */
  clipArchiveMaxTokens: 3500,
} as const;

/** The clip-archive budget of a policy: `clipArchiveMaxTokens`, else the default. */
export function clipArchiveBudget(policy: { clipArchiveMaxTokens?: unknown }): number {
  return typeof policy.clipArchiveMaxTokens === 'number' ? policy.clipArchiveMaxTokens : CONTINUATION_GOAL.clipArchiveMaxTokens;
}

/** The default-policy compactions the goals are checked on: a reset, whatever the engine. */
const GOAL_VARIANT = /^reset-(local|llm-sim|provider)$/;

function goalRows(c: CaseReport): Measured[] {
  return measured(c.rows).filter((r) => r.system === 'compactd' && GOAL_VARIANT.test(r.variant));
}

export interface GoalCheck {
  goal: string;
  met: boolean;
  /** the figures the verdict rests on */
  detail: string;
}

export interface CaseGoals {
  caseId: string;
  variant: string;
  label: string;
  checks: GoalCheck[];
}

function pctText(ratio: number): string {
  return `${(ratio * 100).toFixed(1)}%`;
}

/** Every goal line of a run, per case and default-policy reset row; a row without probes is not checked on them. */
export function continuationGoals(cases: readonly CaseReport[], budget: number): CaseGoals[] {
  return cases.flatMap((c) => {
    const rows = measured(c.rows);
    const peer = rows.find((r) => r.engine === 'peer');
    return rows
      .filter((r) => r.system === 'compactd' && GOAL_VARIANT.test(r.variant))
      .map((r) => {
        const m = r.measures;
        const checks: GoalCheck[] = [];
        const score = m.probes?.score ?? null;
        if (score !== null) {
          checks.push({
            goal: `probe score ≥ ${pctText(CONTINUATION_GOAL.probeScore)}`,
            met: score >= CONTINUATION_GOAL.probeScore,
            detail: `${pctText(score)} (${m.probes?.answered}/${m.probes?.total})`,
          });
          const peerScore = peer?.measures.probes?.score ?? null;
          if (peer && peerScore !== null) {
            const target = Math.min(1, peerScore + CONTINUATION_GOAL.aheadOfPeer);
            checks.push({
              goal: `probe score ≥ ${peer.system}'s + ${CONTINUATION_GOAL.aheadOfPeer * 100} pts (capped at 100%)`,
              met: score >= target,
              detail: `${pctText(score)} vs ${pctText(peerScore)} → target ${pctText(target)}`,
            });
          }
        }
        const recent = m.probes?.byKind['recent-command'];
        if (recent !== undefined && recent.total > 0) {
          checks.push({
            goal: `last ${MAX_RECENT_COMMANDS} commands ≥ ${pctText(CONTINUATION_GOAL.probeScore)}`,
            met: recent.answered / recent.total >= CONTINUATION_GOAL.probeScore,
            detail: `${pctText(recent.answered / recent.total)} (${recent.answered}/${recent.total})`,
          });
        }
        if (peer) {
          const limit = CONTINUATION_GOAL.peerSizeFactor * peer.measures.summaryTokens;
          checks.push({
            goal: `clip-archive ≤ ${CONTINUATION_GOAL.peerSizeFactor}× ${peer.system}'s summary`,
            met: m.summaryTokens <= limit,
            detail: `${m.summaryTokens} vs ${peer.measures.summaryTokens} tokens (limit ${Math.floor(limit)})`,
          });
        }
        checks.push({
          goal: `clip-archive ≤ its budget (${budget} tokens)`,
          met: m.summaryTokens <= budget,
          detail: `${m.summaryTokens} tokens`,
        });
        return { caseId: c.id, variant: r.variant, label: r.label, checks };
      });
  });
}

export interface HalfFigures {
  half: EvalHalf;
  caseIds: string[];
  goalLines: { met: number; total: number };
  /** continuation probes of the default-policy reset rows, pooled */
  probes: { answered: number; total: number };
  /** the last-commands probes among them */
  recentCommands: { answered: number; total: number };
  /** clip-archive tokens ÷ Claude Code's summary tokens, over the rows of cases that have one */
  peerSizeRatio: { min: number; max: number } | null;
}

/** The goal figures of each half of the corpus (split.ts), over the default-policy reset rows. */
export function halfFigures(cases: readonly CaseReport[], budget: number): HalfFigures[] {
  return EVAL_HALVES.map((half) => {
    const inHalf = cases.filter((c) => c.half === half);
    const checks = continuationGoals(inHalf, budget).flatMap((g) => g.checks);
    const rows = inHalf.flatMap(goalRows);
    const probes = rows.flatMap((r) => (r.measures.probes ? [r.measures.probes] : []));
    const recent = probes.flatMap((p) => (p.byKind['recent-command'] ? [p.byKind['recent-command']] : []));
    const ratios = inHalf.flatMap((c) => {
      const peer = measured(c.rows).find((r) => r.engine === 'peer');
      return peer && peer.measures.summaryTokens > 0 ? goalRows(c).map((r) => r.measures.summaryTokens / peer.measures.summaryTokens) : [];
    });
    return {
      half,
      caseIds: inHalf.map((c) => c.id),
      goalLines: { met: checks.filter((c) => c.met).length, total: checks.length },
      probes: { answered: sum(probes, (p) => p.answered), total: sum(probes, (p) => p.total) },
      recentCommands: { answered: sum(recent, (p) => p.answered), total: sum(recent, (p) => p.total) },
      peerSizeRatio: ratios.length === 0 ? null : { min: Math.min(...ratios), max: Math.max(...ratios) },
    };
  });
}
