import { randomBytes } from 'node:crypto';

import { extractLedger, type Ledger } from '../compaction/ledger/index.js';
import { namedIdentifierCount } from '../compaction/plan/index.js';
import {
  buildConsolidationRequest,
  buildRepairRequest,
  buildSummarizeRequest,
  capIdentifiers,
  rankChunkIdentifiers,
  withoutIdentifierLists,
} from '../compaction/summarize/index.js';
import type { SummarizeRequest } from '../compaction/types.js';
import type { Policy } from '../config/policy.js';
import { type ChunkRowWithoutLedger, loadChunkMessages } from '../db/repos/chunks.js';
import { loadBatchLedgers, loadBatchSummariesByIds } from '../db/repos/snapshot.js';
import { mergeStoredLedgers } from './commit-parts.js';
import type { WorkerDeps } from './deps.js';
import { staleSnapshot } from './stale.js';

/**
 * What a chunk's LLM call is made of: the request builder (at a given output budget), the
 * identifiers the answer is gated on (every one of the source, uncapped), and the repair
 * request. A chunk of messages reads its originals; a consolidation reads the batches it
 * absorbs and is gated on the union of their identifiers.
 */
export interface ChunkSource {
  /** the request asking for `target` tokens, sent with max_tokens `cap` (the target when not given) */
  buildRequest(target: number, cap?: number): SummarizeRequest;
  buildRepairRequest(draft: string, missing: readonly string[]): SummarizeRequest;
  identifiers: readonly string[];
  /**
   * the span's state ledger: extracted from the messages, or the exact merge of the absorbed
   * batches' (read a page at a time). Computed when asked: the step asks after its calls, so
   * the extraction never holds a provider slot.
   */
  ledger(): Promise<Ledger | null>;
}

export interface ChunkJob {
  id: string;
  conversationId: string;
  trigger: string;
  header: string | null;
  focus: string | null;
}

/** The source of a chunk, or null when a consolidation's batches are no longer live (nothing to merge). */
export async function loadChunkSource(
  deps: Pick<WorkerDeps, 'db' | 'countTokens'>,
  job: ChunkJob,
  chunk: ChunkRowWithoutLedger,
  policy: Policy,
): Promise<ChunkSource | null> {
  // The fence's ID (SPEC §8): drawn here, per step, so the transcript cannot know it; the first
  // call and a hedged second request share it (one step), a repair gets its own.
  const fenceId = newFenceId();
  const common = { countTokens: deps.countTokens, fenceId, ...(job.focus ? { focus: job.focus } : {}) };
  const repair = (draft: string, missing: readonly string[]) => buildRepairRequest(draft, missing, policy, { fenceId: newFenceId() });
  const named = namedIdentifierCount(policy, chunk.outputBudget);
  if (job.trigger === 'consolidate') {
    // read once, without their ledgers, and kept only as the merge's prompt reads them
    const batches = await loadBatchSummariesByIds(deps.db, chunk.absorbedBatchIds);
    if (batches.length !== chunk.absorbedBatchIds.length || batches.some((b) => b.supersededBy !== null)) return null;
    const identifiers = chunk.identifiers;
    const inputs = batches.map((b) => ({ id: b.id, level: b.level, seqs: b.seqs, summary: withoutIdentifierLists(b.summary) }));
    const request = (target: number, cap?: number) =>
      buildConsolidationRequest(inputs, policy, {
        ...common,
        identifiers: identifiers.slice(0, named),
        maxOutputTokens: target,
        ...capOption(cap),
      });
    return {
      buildRequest: request,
      buildRepairRequest: repair,
      identifiers,
      ledger: () => mergeStoredLedgers(inputs, (ids) => loadBatchLedgers(deps.db, ids)),
    };
  }
  const messages = await loadChunkMessages(deps.db, job.conversationId, chunk.seqs);
  if (messages.length !== chunk.seqs.length) throw staleSnapshot(job.id, chunk.seqs.length - messages.length);
  const ranked = rankChunkIdentifiers(messages);
  const toName = capIdentifiers(ranked, named);
  const request = (target: number, cap?: number) =>
    buildSummarizeRequest(messages, job.header, policy, {
      ...common,
      storedTokens: true,
      identifiers: toName,
      maxOutputTokens: target,
      ...capOption(cap),
    });
  return {
    buildRequest: request,
    buildRepairRequest: repair,
    identifiers: ranked.ordered,
    ledger: async () => extractLedger(messages),
  };
}

const capOption = (cap: number | undefined): { capTokens?: number } => (cap === undefined ? {} : { capTokens: cap });

/** 64 random bits, lower-case hex: the summarizer request's fence ID. */
export function newFenceId(): string {
  return randomBytes(8).toString('hex');
}
