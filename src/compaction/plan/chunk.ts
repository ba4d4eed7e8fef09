import type { PlanChunk } from '../plan-types.js';
import type { Unit } from './units.js';

/**
 * Chunking (SPEC §5.2 step 6, §5.7). Importance decides which units are compacted first;
 * it does not decide how a chunk is cut. The selected units are put back in chronological
 * order and cut into contiguous runs of balanced size (at most `chunkTokens` summarizer-input
 * tokens each), so every summary covers one stretch of time and the seq ranges of two
 * chunks never interleave. A unit larger than a chunk gets a chunk of its own and is
 * truncated in the prompt only (SPEC §5.6a).
 */

export interface ChunkInputUnit {
  unit: Unit;
  /** summarizer-input tokens of the unit (its messages' counts stored at ingest) */
  inputTokens: number;
}

export interface ChunkBuilder {
  add(item: ChunkInputUnit): void;
  count(): number;
  /** sum of `estimate(sourceTokens)` over the chunks the units so far make */
  summaryEstimate(): number;
  build(): PlanChunk[];
}

interface Run {
  items: ChunkInputUnit[];
  sourceTokens: number;
  oversized: boolean;
}

const promptTokens = (item: ChunkInputUnit, chunkTokens: number): number => Math.min(item.inputTokens, chunkTokens);

/** Number of chunks a total needs when every chunk but oversized ones may be full. */
function chunkCountFor(tokens: number, chunkTokens: number): number {
  return Math.max(1, Math.ceil(tokens / chunkTokens));
}

/**
 * Cuts chronologically ordered units into contiguous runs. Each run aims at the tokens left
 * spread evenly over the fewest chunks that can hold them, so the last chunk is not a
 * sliver; no chunk exceeds `chunkTokens`.
 */
function cutRuns(items: readonly ChunkInputUnit[], chunkTokens: number): Run[] {
  let remaining = items.reduce((sum, item) => sum + promptTokens(item, chunkTokens), 0);
  const runs: Run[] = [];
  let current: Run | undefined;
  let goal = 0;
  for (const item of items) {
    const tokens = promptTokens(item, chunkTokens);
    const oversized = item.inputTokens > chunkTokens;
    const joins =
      current !== undefined &&
      !oversized &&
      !current.oversized &&
      current.sourceTokens + tokens <= chunkTokens &&
      current.sourceTokens + tokens / 2 <= goal;
    if (current && joins) {
      current.items.push(item);
      current.sourceTokens += tokens;
    } else {
      goal = Math.ceil(remaining / chunkCountFor(remaining, chunkTokens));
      current = { items: [item], sourceTokens: tokens, oversized };
      runs.push(current);
    }
    remaining -= tokens;
  }
  return runs;
}

const firstSeq = (item: ChunkInputUnit): number => item.unit.seqs[0] ?? 0;

function toPlanChunk(run: Run, index: number): PlanChunk {
  return {
    index,
    seqs: run.items.flatMap((item) => item.unit.seqs).sort((a, b) => a - b),
    sourceTokens: run.sourceTokens,
    messageTokens: run.items.reduce((sum, item) => sum + item.unit.tokens, 0),
    truncatedForPrompt: run.oversized,
  };
}

/** Chunks units given in any order: chunk `index` is chronological (chunk 0 covers the oldest run). */
export function chunkChronologically(items: readonly ChunkInputUnit[], chunkTokens: number): PlanChunk[] {
  const ordered = [...items].sort((a, b) => firstSeq(a) - firstSeq(b));
  return cutRuns(ordered, chunkTokens).map(toPlanChunk);
}

/**
 * `estimate` maps a chunk's source tokens to its expected summary tokens. `count` and
 * `summaryEstimate` are O(1) projections from running totals (the selection loop asks after
 * every unit): balanced chunks of the regular units plus one chunk per oversized unit. The
 * cut `build` makes can hold a chunk more when unit sizes do not divide evenly; the planner
 * checks the projection again on the built chunks.
 */
export function createChunkBuilder(chunkTokens: number, estimate: (sourceTokens: number) => number = () => 0): ChunkBuilder {
  const items: ChunkInputUnit[] = [];
  let regularTokens = 0;
  let oversized = 0;
  const regularChunks = (): number => (regularTokens > 0 ? chunkCountFor(regularTokens, chunkTokens) : 0);
  return {
    add(item) {
      items.push(item);
      if (item.inputTokens > chunkTokens) oversized += 1;
      else regularTokens += item.inputTokens;
    },
    count: () => oversized + regularChunks(),
    summaryEstimate: () => {
      const regular = regularChunks();
      const perRegular = regular > 0 ? estimate(Math.ceil(regularTokens / regular)) * regular : 0;
      return oversized * estimate(chunkTokens) + perRegular;
    },
    build: () => chunkChronologically(items, chunkTokens),
  };
}

/** Chunks units given in selection order. */
export function chunkUnits(items: readonly ChunkInputUnit[], chunkTokens: number): PlanChunk[] {
  return chunkChronologically(items, chunkTokens);
}
