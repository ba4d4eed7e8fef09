import { buildClipArchive, type ClipBatch } from '../compaction/clip-archive.js';
import type { CompactionPlan } from '../compaction/plan-types.js';
import { countMessageTokens } from '../compaction/tokens.js';
import type { CountTokens } from '../compaction/types.js';
import type { Policy } from '../config/policy.js';
import type { Db, Tx } from '../db/client.js';
import { withConversationLock } from '../db/locks.js';
import type { ChunkResultRow } from '../db/repos/chunk-results.js';
import {
  activeSeqs,
  activeTotals,
  archiveMessages,
  countArchivedOriginals,
  insertBatches,
  insertClipArchiveMessage,
  recordCompaction,
  rewriteMessage,
  supersedeBatches,
} from '../db/repos/compaction-writes.js';
import { transitionJob, type JobRow } from '../db/repos/jobs.js';
import type { ConversationRow } from '../db/repos/conversations.js';
import { staleSnapshot } from './stale.js';

/** A re-summary to commit with the chunks: which batches it absorbs ('chunk-N' for new ones). */
export interface ResummaryToCommit {
  absorbed: Array<{ ref: string; level: number; seqs: number[] }>;
  result: ChunkResultRow;
}

export interface CommitInput {
  job: JobRow;
  conversation: ConversationRow;
  plan: CompactionPlan;
  policy: Policy;
  chunkResults: ReadonlyMap<number, ChunkResultRow>;
  previousBatches: ReadonlyArray<ClipBatch & { summaryTokens: number }>;
  resummary: ResummaryToCommit | null;
  countTokens: CountTokens;
  llmTotals: Record<string, unknown>;
}

export type CommitOutcome =
  | { kind: 'completed'; job: JobRow }
  | { kind: 'not_active' }
  | { kind: 'insufficient_progress'; tokensBefore: number; tokensAfter: number };

class InsufficientProgress extends Error {
  constructor(readonly tokensBefore: number, readonly tokensAfter: number) {
    super('insufficient progress');
  }
}

/**
 * Finalize's ONE transaction (SPEC §5.5), under the per-conversation lock: verify the
 * planned messages are still active, insert batches, archive originals and the previous
 * clip-archive, rewrite Tier 1/2 messages, insert the new clip-archive at the earliest
 * archived position, update counters and complete the job. All of it or none of it.
 */
export async function commitCompaction(db: Db, input: CommitInput): Promise<CommitOutcome> {
  const { plan, job, conversation } = input;
  try {
    return await db.transaction(async (tx) => {
      await withConversationLock(tx, conversation.id);
      const committing = await transitionJob(tx, job.id, ['summarizing', 'resummarizing'], { status: 'committing' });
      if (!committing) return { kind: 'not_active' } as const;

      const clipSeq = plan.supersededClipArchiveSeq;
      const planned = new Set([...plan.compressedSeqs, ...plan.rewrites.map((r) => r.seq), ...(clipSeq === null ? [] : [clipSeq])]);
      const stillActive = await activeSeqs(tx, conversation.id, [...planned]);
      if (stillActive.size !== planned.size) throw staleSnapshot(job.id, planned.size - stillActive.size);
      const before = await activeTotals(tx, conversation.id);

      const chunkBatchIds = await insertChunkBatches(tx, input);
      const refToId = new Map(plan.chunks.map((chunk, i) => [`chunk-${chunk.index}`, chunkBatchIds[i] as string]));
      for (const batch of input.previousBatches) refToId.set(batch.id, batch.id);
      const resummaryBatchId = await insertResummary(tx, input, refToId);

      const batchOfSeq = new Map<number, string>();
      plan.chunks.forEach((chunk, i) => chunk.seqs.forEach((seq) => batchOfSeq.set(seq, chunkBatchIds[i] as string)));
      await archiveMessages(tx, {
        conversationId: conversation.id,
        jobId: job.id,
        reason: 'summarized',
        seqs: plan.compressedSeqs,
        batchIds: plan.compressedSeqs.map((seq) => batchOfSeq.get(seq) ?? null),
        remove: true,
      });
      for (const rewrite of plan.rewrites) {
        await archiveMessages(tx, { conversationId: conversation.id, jobId: job.id, reason: rewrite.reason, seqs: [rewrite.seq], remove: false });
        await rewriteMessage(tx, conversation.id, rewrite.seq, rewrite.content, rewrite.tokensAfter);
      }

      let clipArchiveSeq: number | null = null;
      if (clipSeq !== null || plan.chunks.length > 0) {
        if (clipSeq !== null) {
          await archiveMessages(tx, { conversationId: conversation.id, jobId: job.id, reason: 'superseded_clip', seqs: [clipSeq], remove: true });
        }
        clipArchiveSeq = Math.min(...plan.compressedSeqs, ...(clipSeq === null ? [] : [clipSeq]));
        const live = liveBatchesAfter(input, chunkBatchIds, resummaryBatchId);
        const clip = buildClipArchive(live, { archivedMessages: await countArchivedOriginals(tx, conversation.id) }, input.policy);
        await insertClipArchiveMessage(tx, {
          conversationId: conversation.id,
          seq: clipArchiveSeq,
          role: clip.role,
          content: clip.content,
          tokens: countMessageTokens({ role: clip.role, content: clip.content }, input.countTokens),
        });
      }

      const after = await activeTotals(tx, conversation.id);
      checkProgress(input, before.tokens, after.tokens);
      const warning = after.tokens >= input.policy.warnRatio * conversation.contextLimit;
      await recordCompaction(tx, { conversationId: conversation.id, jobId: job.id, tokens: after.tokens, messages: after.messages, watermark: plan.watermarkSeq, warning });
      const completed = await transitionJob(tx, job.id, ['committing'], {
        status: 'completed',
        finishedAt: new Date(),
        result: {
          tokensBefore: before.tokens,
          tokensAfter: after.tokens,
          messagesArchived: plan.compressedSeqs.length + plan.rewrites.length,
          batchIds: [...chunkBatchIds, ...(resummaryBatchId ? [resummaryBatchId] : [])],
          clipArchiveSeq,
          strategy: plan.strategy,
          rewrites: { truncated: plan.stats.truncated, masked: plan.stats.masked },
          ...input.llmTotals,
        },
      });
      if (!completed) throw new Error(`job ${job.id} left 'committing' inside its own transaction`);
      return { kind: 'completed', job: completed } as const;
    });
  } catch (error) {
    if (error instanceof InsufficientProgress) return { kind: 'insufficient_progress', tokensBefore: error.tokensBefore, tokensAfter: error.tokensAfter };
    throw error;
  }
}

/** SPEC §5.6a: at least `minProgressRatio` freed, and an auto compaction must end below its trigger. */
function checkProgress(input: CommitInput, before: number, after: number): void {
  const freed = before === 0 ? 0 : (before - after) / before;
  const aboveTrigger = input.job.trigger !== 'api' && input.job.trigger !== 'tool' && after >= input.policy.triggerRatio * input.conversation.contextLimit;
  if (freed < input.policy.minProgressRatio || aboveTrigger) throw new InsufficientProgress(before, after);
}

async function insertChunkBatches(tx: Tx, input: CommitInput): Promise<string[]> {
  const rows = input.plan.chunks.map((chunk) => {
    const result = input.chunkResults.get(chunk.index);
    if (!result) throw new Error(`chunk ${chunk.index} has no result at commit`);
    return batchRow(input, result, { level: 0, seqs: chunk.seqs, sourceMessages: chunk.seqs.length, sourceTokens: chunk.messageTokens });
  });
  return (await insertBatches(tx, rows)).map((r) => r.id);
}

async function insertResummary(
  tx: Tx,
  input: CommitInput,
  refToId: ReadonlyMap<string, string>,
): Promise<string | null> {
  if (!input.resummary) return null;
  const { absorbed, result } = input.resummary;
  const seqs = [...new Set(absorbed.flatMap((b) => b.seqs))].sort((a, b) => a - b);
  const sourceTokens = absorbed.reduce((sum, b) => sum + input.countTokens(summaryOf(input, b.ref)), 0);
  const level = Math.max(...absorbed.map((b) => b.level)) + 1;
  const [row] = await insertBatches(tx, [batchRow(input, result, { level, seqs, sourceMessages: seqs.length, sourceTokens })]);
  if (!row) throw new Error('re-summary batch insert returned nothing');
  await supersedeBatches(tx, absorbed.map((b) => refToId.get(b.ref) as string), row.id);
  return row.id;
}

function summaryOf(input: CommitInput, ref: string): string {
  const chunk = /^chunk-(\d+)$/.exec(ref);
  if (chunk) return input.chunkResults.get(Number(chunk[1]))?.summary ?? '';
  return input.previousBatches.find((b) => b.id === ref)?.summary ?? '';
}

function batchRow(
  input: CommitInput,
  result: ChunkResultRow,
  coverage: { level: number; seqs: number[]; sourceMessages: number; sourceTokens: number },
) {
  return {
    conversationId: input.conversation.id,
    jobId: input.job.id,
    ...coverage,
    summary: result.summary,
    summaryTokens: input.countTokens(result.summary),
    model: result.model,
    inputTokens: result.usage.inputTokens,
    outputTokens: result.usage.outputTokens,
    cacheReadTokens: result.usage.cacheReadTokens,
    cacheWriteTokens: result.usage.cacheWriteTokens,
    costUsd: result.costUsd,
  };
}

function liveBatchesAfter(input: CommitInput, chunkBatchIds: readonly string[], resummaryBatchId: string | null): ClipBatch[] {
  const absorbed = new Set(input.resummary?.absorbed.map((b) => b.ref) ?? []);
  const live: ClipBatch[] = input.previousBatches.filter((b) => !absorbed.has(b.id));
  input.plan.chunks.forEach((chunk, i) => {
    if (absorbed.has(`chunk-${chunk.index}`)) return;
    const result = input.chunkResults.get(chunk.index) as ChunkResultRow;
    live.push({ id: chunkBatchIds[i] as string, level: 0, summary: result.summary, seqs: chunk.seqs });
  });
  if (input.resummary && resummaryBatchId) {
    const seqs = [...new Set(input.resummary.absorbed.flatMap((b) => b.seqs))].sort((a, b) => a - b);
    const level = Math.max(...input.resummary.absorbed.map((b) => b.level)) + 1;
    live.push({ id: resummaryBatchId, level, summary: input.resummary.result.summary, seqs });
  }
  return live;
}
