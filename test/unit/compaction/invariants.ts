import { expect } from 'vitest';

import { clipOverhead } from '../../../src/compaction/context/clip-archive.js';
import { planCompaction, resolveTarget } from '../../../src/compaction/plan/plan.js';
import { summaryEstimate } from '../../../src/compaction/plan/select.js';
import { splitOptions, splitUnits } from '../../../src/compaction/plan/split.js';
import { groupUnits } from '../../../src/compaction/plan/units.js';
import type { CompactionPlan, PlanRequest, PlanResult, PlanSnapshot } from '../../../src/compaction/plan-types.js';
import { isUserTextMessage } from '../../../src/compaction/render.js';
import type { CountTokens, HistoryMessage } from '../../../src/compaction/types.js';
import type { Policy } from '../../../src/config/policy.js';

/**
 * The planner's invariants, checked on any snapshot: used by the property tests and by the
 * runs over real transcripts.
 */

function keptMessages(plan: CompactionPlan, messages: readonly HistoryMessage[]): HistoryMessage[] {
  const gone = new Set(plan.compressedSeqs);
  if (plan.supersededClipArchiveSeq !== null) gone.add(plan.supersededClipArchiveSeq);
  return messages.filter((m) => !gone.has(m.seq));
}

function checkPartition(plan: CompactionPlan, messages: readonly HistoryMessage[]): void {
  const all = new Set(messages.map((m) => m.seq));
  const compressed = new Set(plan.compressedSeqs);
  expect(compressed.size).toBe(plan.compressedSeqs.length);
  for (const seq of compressed) expect(all.has(seq)).toBe(true);
  if (plan.supersededClipArchiveSeq !== null) {
    expect(compressed.has(plan.supersededClipArchiveSeq)).toBe(false);
    expect(messages.find((m) => m.seq === plan.supersededClipArchiveSeq)?.kind).toBe('clip_archive');
  }
  const kept = keptMessages(plan, messages).map((m) => m.seq);
  // kept ∪ compressed ∪ superseded = all, pairwise disjoint
  expect(kept.length + compressed.size + (plan.supersededClipArchiveSeq === null ? 0 : 1)).toBe(all.size);
  const keptSet = new Set(kept);
  const rewritten = plan.rewrites.map((r) => r.seq);
  expect(new Set(rewritten).size).toBe(rewritten.length);
  for (const seq of rewritten) expect(keptSet.has(seq)).toBe(true);
  expect(plan.watermarkSeq).toBe(messages.at(-1)?.seq);
}

function checkUnitsAndProtection(plan: CompactionPlan, messages: readonly HistoryMessage[]): void {
  const compressed = new Set(plan.compressedSeqs);
  const units = groupUnits(messages);
  for (const unit of units) {
    const inside = unit.seqs.filter((seq) => compressed.has(seq)).length;
    expect([0, unit.seqs.length]).toContain(inside);
    if (unit.pending || unit.kind === 'clip_archive') expect(inside).toBe(0);
    // a pinned message keeps its whole unit active and verbatim (SPEC §5.6a)
    if (unit.messages.some((m) => m.pinned === true)) {
      expect(inside).toBe(0);
      expect(plan.rewrites.filter((r) => unit.seqs.includes(r.seq))).toEqual([]);
    }
  }
  const newestUser = [...messages].reverse().find(isUserTextMessage);
  if (newestUser) {
    expect(compressed.has(newestUser.seq)).toBe(false);
    expect(plan.rewrites.some((r) => r.seq === newestUser.seq)).toBe(false);
  }
  for (const message of messages) {
    if (message.kind !== 'message' || message.role !== 'system') break;
    expect(compressed.has(message.seq)).toBe(false);
  }
}

/** Compaction never creates an orphan: every kept result's call is kept before it, unless it had none to begin with. */
function checkNoNewOrphans(plan: CompactionPlan, messages: readonly HistoryMessage[]): void {
  const openedOriginally = new Set<string>();
  const originallyOrphan = new Set<string>();
  for (const m of messages) {
    for (const id of m.toolResultIds) if (!openedOriginally.has(id)) originallyOrphan.add(`${m.seq}:${id}`);
    for (const id of m.toolUseIds) openedOriginally.add(id);
  }
  const opened = new Set<string>();
  for (const m of keptMessages(plan, messages)) {
    for (const id of m.toolResultIds) if (!opened.has(id)) expect(originallyOrphan.has(`${m.seq}:${id}`)).toBe(true);
    for (const id of m.toolUseIds) opened.add(id);
  }
}

function checkChunksAndRewrites(plan: CompactionPlan, messages: readonly HistoryMessage[], policy: Policy): void {
  const seen = new Set<number>();
  plan.chunks.forEach((chunk, index) => {
    expect(chunk.index).toBe(index);
    expect(chunk.seqs.length).toBeGreaterThan(0);
    expect(chunk.sourceTokens).toBeLessThanOrEqual(policy.chunkTokens);
    expect(chunk.seqs).toEqual([...chunk.seqs].sort((a, b) => a - b));
    // chunks are contiguous runs in time: one never starts before the previous one ends
    if (index > 0) expect(chunk.seqs[0]).toBeGreaterThan(plan.chunks[index - 1]!.seqs.at(-1) as number);
    for (const seq of chunk.seqs) {
      expect(seen.has(seq)).toBe(false);
      seen.add(seq);
    }
  });
  expect([...seen].sort((a, b) => a - b)).toEqual(plan.compressedSeqs);
  if (plan.strategy === 'mask') expect(plan.chunks).toEqual([]);
  const bySeq = new Map(messages.map((m) => [m.seq, m]));
  for (const rewrite of plan.rewrites) {
    const original = bySeq.get(rewrite.seq) as HistoryMessage;
    expect(rewrite.tokensAfter).toBeLessThan(rewrite.tokensBefore);
    expect(rewrite.content.map((b) => b.type)).toEqual(original.content.map((b) => b.type));
    const ids = (blocks: typeof rewrite.content) => blocks.map((b) => (b.type === 'tool_result' ? b.tool_use_id : null));
    expect(ids(rewrite.content)).toEqual(ids(original.content));
  }
}

/** Recomputes the projection from the plan alone. */
function checkProjection(plan: CompactionPlan, snapshot: PlanSnapshot, policy: Policy, countTokens: CountTokens): void {
  const rewritten = new Map(plan.rewrites.map((r) => [r.seq, r.tokensAfter]));
  const kept = keptMessages(plan, snapshot.messages).reduce((s, m) => s + (rewritten.get(m.seq) ?? m.tokens), 0);
  let expected = kept;
  if (plan.chunks.length > 0) {
    const overhead = clipOverhead(countTokens);
    const batches = snapshot.previousSummaries.length + plan.chunks.length;
    const previous = snapshot.previousSummaries.reduce((s, b) => s + b.summaryTokens, 0);
    const estimates = plan.chunks.reduce((s, c) => s + summaryEstimate(policy, c.sourceTokens), 0);
    expected += overhead.fixed + overhead.perBatch * batches + previous + estimates;
  }
  expect(plan.tokensAfter).toBe(expected);
  expect(plan.tokensBefore).toBe(snapshot.messages.reduce((s, m) => s + m.tokens, 0));
}

/** When summarizing every candidate would reach the target, the plan's projection reaches it too. */
function checkTargetReached(
  result: PlanResult,
  snapshot: PlanSnapshot,
  policy: Policy,
  request: PlanRequest,
  countTokens: CountTokens,
): void {
  const strategy = request.strategy ?? policy.strategy;
  const target = result.kind === 'plan' ? result.targetTokens : null;
  if (result.kind !== 'plan' || target === null || (strategy !== 'auto' && strategy !== 'summarize')) return;
  const everything: PlanRequest = { trigger: 'api', strategy: 'summarize' };
  if (request.keepRecent !== undefined) everything.keepRecent = request.keepRecent;
  const all = planCompaction(snapshot, { ...policy, minProgressRatio: 0 }, everything, countTokens);
  const reachable = all.kind === 'plan' && all.tokensAfter <= target;
  if (reachable) expect(result.tokensAfter).toBeLessThanOrEqual(target);
}

export function checkPlanInvariants(
  snapshot: PlanSnapshot,
  policy: Policy,
  request: PlanRequest,
  result: PlanResult,
  countTokens: CountTokens,
): void {
  expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  const strategy = request.strategy ?? policy.strategy;
  const units = groupUnits(snapshot.messages);
  const target = resolveTarget(request, policy, strategy, snapshot.contextLimit);
  const split = splitUnits(units, snapshot.messages, splitOptions(policy, strategy, request.keepRecent, target));
  const tailHead = units[split.tailStart];
  if (tailHead) expect(tailHead.kind).not.toBe('orphan_result');
  if (result.kind === 'noop') {
    if (result.reason === 'empty') expect(snapshot.messages).toEqual([]);
    if (result.reason === 'below_target') expect(target !== null && result.tokensBefore <= target).toBe(true);
    if (result.reason === 'below_tool_minimum') expect(request.trigger).toBe('tool');
    return;
  }
  checkPartition(result, snapshot.messages);
  checkUnitsAndProtection(result, snapshot.messages);
  checkNoNewOrphans(result, snapshot.messages);
  checkChunksAndRewrites(result, snapshot.messages, policy);
  checkProjection(result, snapshot, policy, countTokens);
  checkTargetReached(result, snapshot, policy, request, countTokens);
}
