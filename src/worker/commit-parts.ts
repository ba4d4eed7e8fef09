import { escapeSummary } from '../compaction/clip-archive.js';
import { findMissingIdentifiers } from '../compaction/identifiers.js';
import { needsConsolidation } from '../compaction/resummarize.js';
import type { CountTokens } from '../compaction/types.js';
import type { Policy } from '../config/policy.js';
import type { Tx } from '../db/client.js';
import type { ChunkRow } from '../db/repos/chunks.js';
import { identifiersInActiveMessages } from '../db/repos/context-reads.js';
import { insertJob, type JobRow } from '../db/repos/jobs.js';

/** Pieces both commit transactions share (a compaction's and a consolidation's). */

export function batchRow(
  owner: { conversationId: string; jobId: string; countTokens: CountTokens },
  chunk: ChunkRow,
  coverage: { level: number; seqs: number[]; sourceMessages: number; sourceTokens: number },
) {
  const summary = chunk.summary ?? '';
  const usage = chunk.usage ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  return {
    conversationId: owner.conversationId,
    jobId: owner.jobId,
    ...coverage,
    summary,
    summaryTokens: owner.countTokens(summary),
    model: chunk.model ?? 'unknown',
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadTokens: usage.cacheReadTokens,
    cacheWriteTokens: usage.cacheWriteTokens,
    costUsd: chunk.costUsd,
    identifiers: chunk.identifiers,
  };
}

/**
 * Retention as the job result reports it (SPEC §5.6a): every identifier extracted from the
 * span (uncapped, the union of the chunks' gates), looked up in the context after the
 * commit. Each chunk's identifiers are looked up first in its own summary as the clip-archive
 * carries it (escaped), which is where the gate put them: searching the whole clip-archive
 * for each one would cost identifiers × clip length, seconds at 100 chunks. What a summary
 * lacks is then looked up in the whole clip-archive, and what that lacks in the active messages.
 */
export async function measureRetention(tx: Tx, conversationId: string, chunks: readonly ChunkRow[], clipText: string): Promise<{ found: number; total: number }> {
  const total = new Set(chunks.flatMap((c) => c.identifiers)).size;
  const notInOwnSummary = new Set(chunks.flatMap((c) => findMissingIdentifiers(c.identifiers, escapeSummary(c.summary ?? ''))));
  const missingFromClip = findMissingIdentifiers([...notInOwnSummary], clipText);
  const inMessages = await identifiersInActiveMessages(tx, conversationId, missingFromClip);
  return { found: total - missingFromClip.length + inMessages.size, total };
}

/**
 * SPEC §5.5 step 4, §5.7: when more batches are live than `maxLiveBatches`, or the new
 * clip-archive is over its token budget with two or more batches, a consolidation job is
 * recorded in the same transaction (so it cannot be lost); the caller enqueues it after the
 * commit, and the reconciler re-enqueues it if that enqueue never happens. At most one
 * consolidation is active per conversation (a partial unique index): null when one is.
 */
export async function enqueueConsolidationIfNeeded(
  tx: Tx,
  job: Pick<JobRow, 'tenantId' | 'conversationId'>,
  live: { batches: number; clipTokens: number },
  policy: Pick<Policy, 'maxLiveBatches' | 'clipArchiveMaxTokens'>,
): Promise<string | null> {
  if (!needsConsolidation(live.batches, live.clipTokens, policy)) return null;
  const row = await insertJob(tx, { tenantId: job.tenantId, conversationId: job.conversationId, trigger: 'consolidate', options: {} });
  return row?.id ?? null;
}
