import type { Policy } from '../../config/policy.js';
import type { PlanRewrite } from '../plan-types.js';
import { type ChunkBuilder, createChunkBuilder } from './chunk.js';
import type { MaskOption } from './tiers.js';
import type { Unit } from './units.js';

/**
 * Selection against a projected token count (SPEC §5.2 steps 4–5). The projection is the
 * active tokens of everything kept (after rewrites) plus, once anything is summarized, the
 * new clip-archive: its fixed overhead, the previous live summaries and an estimate of each
 * new chunk's summary. It is computed the same way while selecting and for the final plan,
 * so "projected ≤ target" holds for the plan whenever the selection reached it.
 */

export interface ProjectionBase {
  policy: Policy;
  /** tokens of the current clip-archive message (superseded when a summary is made) */
  clipTokens: number;
  previousBatches: number;
  previousSummaryTokens: number;
  overhead: { fixed: number; perBatch: number };
}

export function summaryEstimate(policy: Policy, sourceTokens: number): number {
  return Math.min(policy.summaryMaxTokens, Math.ceil(sourceTokens * policy.summaryEstimateRatio));
}

/** Projected active tokens given the kept tokens and the chunks built so far. */
export function projectTokens(base: ProjectionBase, keptTokens: number, chunks: number, summaryTokens: number): number {
  if (chunks === 0) return keptTokens;
  const batches = base.previousBatches + chunks;
  const archive = base.overhead.fixed + base.overhead.perBatch * batches + base.previousSummaryTokens + summaryTokens;
  return keptTokens - base.clipTokens + archive;
}

/** Mutable working state: current rewrites and the kept-token total they imply. */
export interface WorkingSet {
  rewrites: Map<number, PlanRewrite>;
  keptTokens: number;
}

/** Tier 2: applies mask options in order until the projection reaches the target (all when target is null). */
export function applyMasks(work: WorkingSet, options: readonly MaskOption[], target: number | null): void {
  for (const option of options) {
    if (target !== null && work.keptTokens <= target) return;
    work.rewrites.set(option.rewrite.seq, option.rewrite);
    work.keptTokens -= option.savingTokens;
  }
}

export interface Selection {
  selected: Unit[];
  builder: ChunkBuilder;
}

/**
 * Tier 3 selection: takes units in the given order (least important first) until the
 * projection reaches the target, or all of them when the target is null.
 */
export function selectUnits(
  ordered: readonly Unit[],
  inputTokensOf: (unit: Unit) => number,
  work: WorkingSet,
  base: ProjectionBase,
  target: number | null,
): Selection {
  const builder = createChunkBuilder(base.policy.chunkTokens, (tokens) => summaryEstimate(base.policy, tokens));
  const selected: Unit[] = [];
  const projected = () => projectTokens(base, work.keptTokens, builder.count(), builder.summaryEstimate());
  for (const unit of ordered) {
    if (target !== null && projected() <= target) break;
    for (const message of unit.messages) {
      work.keptTokens -= work.rewrites.get(message.seq)?.tokensAfter ?? message.tokens;
      work.rewrites.delete(message.seq);
    }
    builder.add({ unit, inputTokens: inputTokensOf(unit) });
    selected.push(unit);
  }
  return { selected, builder };
}

/**
 * Undoes masks the summaries made unnecessary, newest first (the agent most likely still
 * needs recent outputs), as long as the projection stays within the target.
 */
export function restoreUnneededMasks(
  work: WorkingSet,
  options: readonly MaskOption[],
  selection: Selection,
  base: ProjectionBase,
  target: number,
): void {
  const chunks = selection.builder.count();
  const summaries = selection.builder.summaryEstimate();
  for (let i = options.length - 1; i >= 0; i -= 1) {
    const option = options[i] as MaskOption;
    if (work.rewrites.get(option.rewrite.seq) !== option.rewrite) continue;
    const restoredTokens = work.keptTokens + option.savingTokens;
    if (projectTokens(base, restoredTokens, chunks, summaries) > target) continue;
    work.keptTokens = restoredTokens;
    if (option.previous) work.rewrites.set(option.rewrite.seq, option.previous);
    else work.rewrites.delete(option.rewrite.seq);
  }
}
