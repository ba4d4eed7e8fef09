/**
 * Which live batches to collapse (SPEC §5.5 step 1): when the live batches, new ones
 * included, would exceed `maxLiveBatches`, the oldest by coverage are merged into one
 * higher-level batch so that exactly `maxLiveBatches` remain live.
 */

export interface CollapsibleBatch {
  id: string;
  level: number;
  seqs: readonly number[];
}

export interface CollapseChoice<B extends CollapsibleBatch> {
  /** the batches to merge, oldest coverage first */
  batches: B[];
  /** level of the merged batch: one above the highest merged level */
  level: number;
}

function firstSeq(batch: CollapsibleBatch): number {
  return batch.seqs.reduce((min, seq) => Math.min(min, seq), Number.POSITIVE_INFINITY);
}

/** Orders batches by the earliest seq they cover, ties by id, so the choice is deterministic. */
export function byCoverage<B extends CollapsibleBatch>(batches: readonly B[]): B[] {
  return [...batches].sort((a, b) => firstSeq(a) - firstSeq(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Returns the batches to collapse, or null when the live set fits. `live` holds every batch
 * that would be live after this compaction (previous live batches plus the new ones).
 */
export function chooseBatchesToCollapse<B extends CollapsibleBatch>(
  live: readonly B[],
  maxLiveBatches: number,
): CollapseChoice<B> | null {
  if (live.length <= maxLiveBatches) return null;
  // merging k batches into one leaves live - k + 1, which must equal the maximum
  const take = live.length - maxLiveBatches + 1;
  const batches = byCoverage(live).slice(0, take);
  const level = batches.reduce((max, batch) => Math.max(max, batch.level), 0) + 1;
  return { batches, level };
}
