import type { Ledger } from './ledger/index.js';
import type { Block, HistoryMessage } from './types.js';

/**
 * Shapes of the planner's input and output. A plan is plain JSON: it is stored as jsonb on
 * the job row and executed later, possibly by another process.
 */

export type Strategy = 'auto' | 'summarize' | 'mask' | 'reset' | 'native';
export type Trigger = 'api' | 'auto' | 'tool';

/** A live (not superseded) batch summary already in the clip-archive. */
export interface LiveBatch {
  id: string;
  level: number;
  summary: string;
  /** exact seqs of the original messages the batch covers */
  seqs: number[];
  summaryTokens: number;
  /** the state ledger of what the batch covers (SPEC §5.6b); absent for batches written before it */
  ledger?: Ledger | null;
}

export interface PlanSnapshot {
  /** active history in seq order; may include one `kind: 'clip_archive'` message */
  messages: HistoryMessage[];
  contextLimit: number;
  previousSummaries: LiveBatch[];
}

export interface PlanRequest {
  trigger: Trigger;
  strategy?: Strategy;
  keepRecent?: number;
  target?: { ratio?: number; tokens?: number };
  focus?: string;
}

/** A Tier 1/2 rewrite of a kept message: the active row gets `content`, the archive keeps the original. */
export interface PlanRewrite {
  seq: number;
  reason: 'truncated' | 'masked';
  content: Block[];
  tokensBefore: number;
  tokensAfter: number;
}

export interface PlanChunk {
  /** position in time: chunk 0 covers the oldest contiguous run of the selected units */
  index: number;
  /** exact seqs, ascending (chronological inside the chunk) */
  seqs: number[];
  /** summarizer-input tokens of the messages (their counts stored at ingest), after any prompt-only truncation (≤ chunkTokens) */
  sourceTokens: number;
  /** active-history tokens of those messages */
  messageTokens: number;
  /** one unit was larger than a chunk and is truncated in the prompt only */
  truncatedForPrompt: boolean;
}

export interface CompactionPlan {
  kind: 'plan';
  version: 1;
  trigger: Trigger;
  strategy: Strategy;
  /** highest seq of the snapshot: messages appended later are never touched */
  watermarkSeq: number;
  contextLimit: number;
  /** projected-token goal, or null when a manual compaction compresses every candidate */
  targetTokens: number | null;
  tokensBefore: number;
  /** projection: kept messages after rewrites + the new clip-archive (previous + estimated new summaries) */
  tokensAfter: number;
  rewrites: PlanRewrite[];
  chunks: PlanChunk[];
  /** every seq that is summarized (the union of the chunks), ascending */
  compressedSeqs: number[];
  /** the current clip-archive, superseded by the new one; null when no summary is made */
  supersededClipArchiveSeq: number | null;
  /** live batches at plan time, carried into the new clip-archive */
  previousBatchIds: string[];
  focus: string | null;
  /** strategy native: every seq its request sends (the span, and for OpenAI the user messages its compaction keeps) */
  nativeRequestSeqs?: number[];
  /** how the strategy was chosen (SPEC §5.10): `auto` reports its rule's outcome and why */
  decision?: { strategy: Strategy; reason: string; estimatedNativeMs?: number };
  stats: { candidateUnits: number; summarizedUnits: number; truncated: number; masked: number };
}

export type NoopReason = 'empty' | 'below_target' | 'below_tool_minimum' | 'nothing_to_compact' | 'insufficient_progress';

export interface CompactionNoop {
  kind: 'noop';
  reason: NoopReason;
  /** human-readable, e.g. "No compaction needed" */
  message: string;
  tokensBefore: number;
  /** projection of the best plan found, for insufficient_progress */
  tokensAfter?: number;
}

export type PlanResult = CompactionPlan | CompactionNoop;

/**
 * What a compaction job row keeps of its plan: the job-level part (rewrites, watermark,
 * projections) and the orientation header. The chunks, and so the summarized seqs, are rows
 * of their own, read by the step that needs them: at 100,000 messages the seqs made the plan
 * 673 KB, re-read with the job by every step that loads it.
 */
export type JobPlan = Omit<CompactionPlan, 'chunks' | 'previousBatchIds' | 'compressedSeqs'> & {
  chunkCount: number;
  header: string | null;
};

/** A consolidation's plan: which live batches it merges into one of `level`. */
export interface ConsolidationPlan {
  kind: 'consolidation';
  absorbedBatchIds: string[];
  level: number;
  chunkCount: 1;
}
