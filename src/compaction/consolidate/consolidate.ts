/**
 * Which live batches a consolidation merges (SPEC §5.5 step 4): when more than
 * `maxLiveBatches` are live, enough of them are merged into one higher-level batch that
 * exactly `maxLiveBatches` remain. The lowest levels go first (oldest coverage first within
 * a level), as in a leveled merge: a summary that was already merged is read again only when
 * the levels below it are spent, so the input of consolidations grows with the logarithm of
 * the history, not with the history, and the oldest facts are not re-summarized at every
 * round (each pass is a chance to lose one).
 *
 * The clip-archive also has a token budget (SPEC §5.7): when it is over, every live batch is
 * merged into one sized to what the budget leaves, so the context reads as one account.
 */

export interface ConsolidationCandidate {
  id: string;
  level: number;
  seqs: readonly number[];
}

export interface ConsolidationChoice<B extends ConsolidationCandidate> {
  /** the batches to merge, oldest coverage first */
  batches: B[];
  /** level of the merged batch: one above the highest merged level */
  level: number;
}

function firstSeq(batch: ConsolidationCandidate): number {
  return batch.seqs.reduce((min, seq) => Math.min(min, seq), Number.POSITIVE_INFINITY);
}

/** Orders batches by the earliest seq they cover, ties by id, so the choice is deterministic. */
export function byCoverage<B extends ConsolidationCandidate>(batches: readonly B[]): B[] {
  return [...batches].sort((a, b) => firstSeq(a) - firstSeq(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Lowest level first, then by coverage. */
function byLevel<B extends ConsolidationCandidate>(batches: readonly B[]): B[] {
  return byCoverage(batches).sort((a, b) => a.level - b.level);
}

/** Whether a consolidation is due: too many live batches, or a clip-archive over its budget with two or more to merge. */
export function needsConsolidation(
  liveBatches: number,
  clipTokens: number,
  policy: { maxLiveBatches: number; clipArchiveMaxTokens: number },
): boolean {
  return liveBatches > policy.maxLiveBatches || (liveBatches >= 2 && clipTokens > policy.clipArchiveMaxTokens);
}

/**
 * Returns the batches to collapse, or null when the live set fits. `live` holds every batch
 * that would be live after this compaction (previous live batches plus the new ones).
 * `overBudget`: the clip-archive exceeds its budget, so all of them are merged.
 */
export function chooseBatchesToConsolidate<B extends ConsolidationCandidate>(
  live: readonly B[],
  maxLiveBatches: number,
  overBudget = false,
): ConsolidationChoice<B> | null {
  if (overBudget && live.length >= 2) return { batches: byCoverage(live), level: live.reduce((max, b) => Math.max(max, b.level), 0) + 1 };
  if (live.length <= maxLiveBatches) return null;
  // merging k batches into one leaves live - k + 1, which must equal the maximum
  const take = live.length - maxLiveBatches + 1;
  const batches = byCoverage(byLevel(live).slice(0, take));
  const level = batches.reduce((max, batch) => Math.max(max, batch.level), 0) + 1;
  return { batches, level };
}
