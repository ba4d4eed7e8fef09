import type { PlanChunk } from './plan-types.js';
import type { Unit } from './units.js';

/**
 * Chunking (SPEC §5.2 step 6): selected units, in the order they were selected (ascending
 * importance), fill chunks of at most `chunkTokens` summarizer-input tokens one after the
 * other. Inside a chunk, messages are chronological. A unit larger than a chunk gets a
 * chunk of its own and is truncated in the prompt only (SPEC §5.6a).
 *
 * The builder is incremental so the selection loop can project summary sizes exactly as
 * the final chunks will be.
 */

export interface ChunkInputUnit {
  unit: Unit;
  /** summarizer-input tokens of the unit (its messages' counts stored at ingest) */
  inputTokens: number;
}

interface OpenChunk {
  units: ChunkInputUnit[];
  sourceTokens: number;
  truncatedForPrompt: boolean;
}

export interface ChunkBuilder {
  add(item: ChunkInputUnit): void;
  count(): number;
  /** sum of `estimate(sourceTokens)` over the chunks so far */
  summaryEstimate(): number;
  build(): PlanChunk[];
}

/** `estimate` maps a chunk's source tokens to its expected summary tokens. */
export function createChunkBuilder(chunkTokens: number, estimate: (sourceTokens: number) => number = () => 0): ChunkBuilder {
  const chunks: OpenChunk[] = [];
  // next-fit: only the last chunk is open, so the estimate of closed ones never changes
  let closedEstimate = 0;
  return {
    add(item) {
      const oversized = item.inputTokens > chunkTokens;
      const tokens = oversized ? chunkTokens : item.inputTokens;
      const current = chunks.at(-1);
      if (current && !oversized && current.sourceTokens + tokens <= chunkTokens) {
        current.units.push(item);
        current.sourceTokens += tokens;
        return;
      }
      if (current) closedEstimate += estimate(current.sourceTokens);
      chunks.push({ units: [item], sourceTokens: tokens, truncatedForPrompt: oversized });
    },
    count: () => chunks.length,
    summaryEstimate: () => {
      const current = chunks.at(-1);
      return closedEstimate + (current ? estimate(current.sourceTokens) : 0);
    },
    build: () =>
      chunks.map((chunk, index) => ({
        index,
        seqs: chunk.units.flatMap((item) => item.unit.seqs).sort((a, b) => a - b),
        sourceTokens: chunk.sourceTokens,
        messageTokens: chunk.units.reduce((sum, item) => sum + item.unit.tokens, 0),
        truncatedForPrompt: chunk.truncatedForPrompt,
      })),
  };
}

/** Chunks units given in selection order. */
export function chunkUnits(items: readonly ChunkInputUnit[], chunkTokens: number): PlanChunk[] {
  const builder = createChunkBuilder(chunkTokens);
  for (const item of items) builder.add(item);
  return builder.build();
}
