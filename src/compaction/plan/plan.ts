import type { Policy } from '../../config/policy.js';
import { clipOverhead } from '../context/index.js';
import type { CompactionNoop, NoopReason, PlanChunk, PlanRequest, PlanResult, PlanSnapshot, Strategy } from '../plan-types.js';
import type { CountTokens, HistoryMessage } from '../types.js';
import { rankUnits } from './score.js';
import {
  applyMasks,
  type ProjectionBase,
  projectTokens,
  restoreUnneededMasks,
  type Selection,
  selectUnits,
  summaryEstimate,
  type WorkingSet,
} from './select.js';
import { splitOptions, splitUnits } from './split.js';
import { type MaskOption, maskOptions, truncateOversized } from './tiers.js';
import { groupUnits, type Unit } from './units.js';

const NOOP_MESSAGES: Record<NoopReason, string> = {
  empty: 'The conversation has no messages.',
  below_target: 'No compaction needed: the conversation is already within the target.',
  below_tool_minimum: 'No compaction needed: the conversation is below the minimum size for the compact tool.',
  nothing_to_compact:
    'No compaction needed: every message is protected (system prompt, recent tail, newest user message, pinned messages).',
  insufficient_progress: 'Compaction would not free enough context (minProgressRatio / trigger threshold).',
};

function noop(reason: NoopReason, tokensBefore: number, tokensAfter?: number): CompactionNoop {
  const result: CompactionNoop = { kind: 'noop', reason, message: NOOP_MESSAGES[reason], tokensBefore };
  if (tokensAfter !== undefined) result.tokensAfter = tokensAfter;
  return result;
}

/** The projected-token goal: an explicit request target, the policy target for auto, else none. */
export function resolveTarget(request: PlanRequest, policy: Policy, strategy: Strategy, contextLimit: number): number | null {
  if (strategy === 'reset') return null;
  if (request.target?.tokens !== undefined) return Math.floor(request.target.tokens);
  if (request.target?.ratio !== undefined) return Math.floor(request.target.ratio * contextLimit);
  return request.trigger === 'auto' ? Math.floor(policy.targetRatio * contextLimit) : null;
}

function inSeqOrder(messages: readonly HistoryMessage[]): HistoryMessage[] {
  const sorted = messages.every((m, i) => i === 0 || (messages[i - 1] as HistoryMessage).seq < m.seq);
  return sorted ? [...messages] : [...messages].sort((a, b) => a.seq - b.seq);
}

/** Orphaned results go first: their call is gone, so they are useless to the agent. */
function selectionOrder(candidates: readonly Unit[], lastIndex: number, policy: Policy): Unit[] {
  const orphans = candidates.filter((unit) => unit.kind === 'orphan_result');
  const ranked = rankUnits(
    candidates.filter((unit) => unit.kind !== 'orphan_result'),
    lastIndex,
    policy.scoring,
  );
  return [...orphans, ...ranked.map((entry) => entry.unit)];
}

/**
 * A unit's summarizer-input size: the token counts stored at ingest (tool markers cost about
 * what the per-message framing does), so planning never re-tokenizes the history.
 */
function unitInputTokens(unit: Unit): number {
  return unit.tokens;
}

function projectionBase(
  snapshot: PlanSnapshot,
  clip: HistoryMessage | undefined,
  policy: Policy,
  countTokens: CountTokens,
): ProjectionBase {
  return {
    policy,
    clipTokens: clip?.tokens ?? 0,
    previousBatches: snapshot.previousSummaries.length,
    previousSummaryTokens: snapshot.previousSummaries.reduce((sum, b) => sum + b.summaryTokens, 0),
    overhead: clipOverhead(countTokens),
  };
}

interface Execution {
  work: WorkingSet;
  selection: Selection | null;
  truncated: number;
  masked: number;
}

/** Runs the tiers the strategy allows, then Tier 3 selection when still needed. */
function execute(
  strategy: Strategy,
  candidates: readonly Unit[],
  ordered: readonly Unit[],
  base: ProjectionBase,
  target: number | null,
  tokensBefore: number,
  countTokens: CountTokens,
): Execution {
  const work: WorkingSet = { rewrites: new Map(), keptTokens: tokensBefore };
  const useTiers = strategy === 'mask' || (strategy === 'auto' && target !== null);
  let masks: MaskOption[] = [];
  if (useTiers) {
    const truncated = truncateOversized(candidates, base.policy, countTokens);
    for (const rewrite of truncated.values()) {
      work.rewrites.set(rewrite.seq, rewrite);
      work.keptTokens -= rewrite.tokensBefore - rewrite.tokensAfter;
    }
    masks = maskOptions(candidates, truncated, base.policy, countTokens);
    applyMasks(work, masks, target);
  }
  let selection: Selection | null = null;
  const reached = target !== null && work.keptTokens <= target;
  if (strategy !== 'mask' && !(useTiers && reached)) {
    selection = selectUnits(ordered, unitInputTokens, work, base, target);
    if (target !== null && masks.length > 0) restoreUnneededMasks(work, masks, selection, base, target);
  }
  const values = [...work.rewrites.values()];
  return {
    work,
    selection,
    truncated: values.filter((r) => r.reason === 'truncated').length,
    masked: values.filter((r) => r.reason === 'masked').length,
  };
}

/** The projection of an execution's built chunks. */
function projectExecution(base: ProjectionBase, run: Execution): { chunks: PlanChunk[]; tokensAfter: number } {
  const chunks = run.selection?.builder.build() ?? [];
  const summaries = chunks.reduce((sum, chunk) => sum + summaryEstimate(base.policy, chunk.sourceTokens), 0);
  return { chunks, tokensAfter: projectTokens(base, run.work.keptTokens, chunks.length, summaries) };
}

/** How often selection is retried with a lower goal when the built chunks overshoot it. */
const RESELECT_ATTEMPTS = 8;

/**
 * Selection projects balanced chunks; the chronological cut of the chosen units can make
 * one more chunk (one more summary) than projected. When that lifts the projection over the
 * target, selection runs again aiming lower by the overshoot (doubling each time), then at nothing
 * left, so "projected ≤ target" holds for the plan whenever the candidates allow it.
 */
function executeWithinTarget(
  executeFor: (goal: number | null) => Execution,
  base: ProjectionBase,
  target: number | null,
  candidates: number,
): Execution & { chunks: PlanChunk[]; tokensAfter: number } {
  let goal = target;
  let run = executeFor(goal);
  let projected = projectExecution(base, run);
  const everything = () => (run.selection?.selected.length ?? 0) >= candidates;
  for (let attempt = 0; attempt < RESELECT_ATTEMPTS && target !== null && goal !== null; attempt += 1) {
    const overshoot = projected.tokensAfter - target;
    if (overshoot <= 0 || everything()) break;
    goal -= overshoot * 2 ** attempt;
    run = executeFor(goal);
    projected = projectExecution(base, run);
  }
  if (target !== null && projected.tokensAfter > target && !everything()) {
    // the doubled steps can stay within one unit's size (an overshoot of 1 token lowers the goal by
    // 255 in all): aiming at nothing left selects every candidate, which reaches the target if anything does
    const all = executeFor(0);
    const allProjected = projectExecution(base, all);
    if (allProjected.tokensAfter <= target) return { ...all, ...allProjected };
  }
  return { ...run, ...projected };
}

/**
 * Plans one compaction of a snapshot (SPEC §5.2, §5.6a): which messages are rewritten by
 * Tier 1/2, which are summarized in which chunks, and the projected result. Pure: the
 * shell persists the plan and executes it. Sizes are the messages' stored token counts;
 * `countTokens` measures only what the plan writes (Tier 1/2 rewrites, the clip-archive overhead).
 * Messages may come without content but with `features` (the plan step's snapshot): scoring
 * reads those, and Tier 1/2 rewrite only messages whose content is there.
 */
export function planCompaction(snapshot: PlanSnapshot, policy: Policy, request: PlanRequest, countTokens: CountTokens): PlanResult {
  const messages = inSeqOrder(snapshot.messages);
  const tokensBefore = messages.reduce((sum, m) => sum + m.tokens, 0);
  const last = messages.at(-1);
  if (!last) return noop('empty', 0);
  const strategy = request.strategy ?? policy.strategy;
  const target = resolveTarget(request, policy, strategy, snapshot.contextLimit);
  if (request.trigger === 'tool' && tokensBefore < policy.toolMinTokens) return noop('below_tool_minimum', tokensBefore);
  if (target !== null && tokensBefore <= target) return noop('below_target', tokensBefore);

  const units = groupUnits(messages);
  const split = splitUnits(units, messages, splitOptions(policy, strategy, request.keepRecent, target));
  if (split.candidates.length === 0) return noop('nothing_to_compact', tokensBefore);

  const clip = messages.find((m) => m.kind === 'clip_archive');
  const base = projectionBase(snapshot, clip, policy, countTokens);
  const ordered = selectionOrder(split.candidates, messages.length - 1, policy);
  const run = executeWithinTarget(
    (goal) => execute(strategy, split.candidates, ordered, base, goal, tokensBefore, countTokens),
    base,
    target,
    ordered.length,
  );
  const { chunks, tokensAfter } = run;
  if (chunks.length === 0 && run.work.rewrites.size === 0) return noop('nothing_to_compact', tokensBefore);

  const progress = tokensBefore > 0 ? (tokensBefore - tokensAfter) / tokensBefore : 0;
  // SPEC §5.6a: an auto compaction that cannot get below the trigger would only loop
  const stillOverTrigger = request.trigger === 'auto' && tokensAfter >= policy.triggerRatio * snapshot.contextLimit;
  if (progress < policy.minProgressRatio || stillOverTrigger) {
    return noop('insufficient_progress', tokensBefore, tokensAfter);
  }
  return {
    kind: 'plan',
    version: 1,
    trigger: request.trigger,
    strategy,
    watermarkSeq: last.seq,
    contextLimit: snapshot.contextLimit,
    targetTokens: target,
    tokensBefore,
    tokensAfter,
    rewrites: [...run.work.rewrites.values()].sort((a, b) => a.seq - b.seq),
    chunks,
    compressedSeqs: chunks.flatMap((chunk) => chunk.seqs).sort((a, b) => a - b),
    supersededClipArchiveSeq: chunks.length > 0 && clip ? clip.seq : null,
    previousBatchIds: snapshot.previousSummaries.map((batch) => batch.id),
    focus: request.focus ?? null,
    stats: {
      candidateUnits: split.candidates.length,
      summarizedUnits: run.selection?.selected.length ?? 0,
      truncated: run.truncated,
      masked: run.masked,
    },
  };
}
