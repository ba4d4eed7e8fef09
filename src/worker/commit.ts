import { buildClipArchive } from '../compaction/context/index.js';
import type { Ledger } from '../compaction/ledger/index.js';
import type { JobPlan } from '../compaction/plan-types.js';
import { countMessageTokens } from '../compaction/tokens.js';
import type { CountTokens, ProviderCompaction } from '../compaction/types.js';
import type { Policy } from '../config/policy.js';
import type { Db, Tx } from '../db/client.js';
import { withConversationLock } from '../db/locks.js';
import { chunkCopySql, type ChunkRowWithoutLedger, loadChunkLedgers } from '../db/repos/chunks.js';
import {
  activeTotalsForCommit,
  countArchivedOriginals,
  insertBatches,
  insertClipArchiveMessage,
  moveToArchive,
  recordCompaction,
} from '../db/repos/compaction-writes.js';
import type { ConversationRow } from '../db/repos/conversations.js';
import { recordJobEvent } from '../db/repos/job-outbox.js';
import { type JobRow, transitionJob } from '../db/repos/jobs.js';
import { type BatchSummaryRow, loadBatchLedgers, loadLiveBatchSummaries } from '../db/repos/snapshot.js';
import { agentCacheEffect } from './agent-cache.js';
import {
  batchRow,
  clipStateOf,
  contextFigures,
  enqueueConsolidationIfNeeded,
  measureContextHolds,
  mergeStoredLedgers,
  type StatefulBatch,
} from './commit-parts.js';
import { pinnedSinceSnapshot, staleSnapshot } from './stale.js';

export interface CommitInput {
  job: JobRow;
  conversation: ConversationRow;
  plan: JobPlan;
  policy: Policy;
  /** every chunk of the plan, done (their ledgers stay in Postgres until merged, a page at a time) */
  chunks: readonly ChunkRowWithoutLedger[];
  countTokens: CountTokens;
  llmTotals: Record<string, unknown>;
}

export type CommitOutcome =
  | { kind: 'completed'; job: JobRow; deliveryId: string | null; consolidationJobId: string | null }
  | { kind: 'not_active' }
  | { kind: 'insufficient_progress'; tokensBefore: number; tokensAfter: number };

class InsufficientProgress extends Error {
  constructor(
    readonly tokensBefore: number,
    readonly tokensAfter: number,
  ) {
    super('insufficient progress');
  }
}

const minOf = (values: readonly number[]): number => values.reduce((min, v) => (v < min ? v : min), Number.POSITIVE_INFINITY);

/** Messages the chunks summarize (they partition the plan's span). */
const summarizedCount = (chunks: readonly ChunkRowWithoutLedger[]): number => chunks.reduce((sum, chunk) => sum + chunk.seqs.length, 0);

/**
 * Finalize's ONE transaction (SPEC §5.5), under the per-conversation lock: verify the
 * planned messages are still active and none was pinned since the plan, insert the level-0 batches, archive originals and the
 * previous clip-archive, rewrite Tier 1/2 messages, insert the new clip-archive (carrying
 * the batches live *now*, so a consolidation that committed meanwhile is respected) at the
 * earliest archived position, update counters, measure retention in the resulting context,
 * record a follow-up consolidation job when batches accumulate, complete the job and record
 * its terminal event (the outbox).
 * All of it or none of it. Never waits for a re-summary.
 */
export async function commitCompaction(db: Db, input: CommitInput): Promise<CommitOutcome> {
  const { plan, job, conversation } = input;
  try {
    return await db.transaction(async (tx) => {
      await withConversationLock(tx, conversation.id);
      const committing = await transitionJob(tx, job.id, ['summarizing'], { status: 'committing' });
      if (!committing) return { kind: 'not_active' } as const;

      const clipSeq = plan.supersededClipArchiveSeq;
      // the summarized seqs are the chunks' (read in Postgres); the rest are a few
      const extraSeqs = [...plan.rewrites.map((r) => r.seq), ...(clipSeq === null ? [] : [clipSeq])];
      const planned = summarizedCount(input.chunks) + extraSeqs.length;
      const before = await activeTotalsForCommit(tx, conversation.id, job.id, extraSeqs);
      if (before.active !== planned) throw staleSnapshot(job.id, planned - before.active);
      // pinned after the plan was made (the pin takes this lock): the plan may not archive or rewrite it
      if (before.pinned > 0) throw pinnedSinceSnapshot(job.id, before.pinned);
      const previous = await loadLiveBatchSummaries(tx, conversation.id);

      const chunkBatchIds = (
        await insertBatches(
          tx,
          input.chunks.map((chunk) => chunkBatchRow(input, chunk)),
        )
      ).map((r) => r.id);
      await archiveOriginals(tx, input);

      let clipArchiveSeq: number | null = null;
      let clipText = '';
      let clipTokens = 0;
      const live: StatefulBatch[] = [
        ...previous,
        ...input.chunks.map((c, i) => ({
          id: chunkBatchIds[i] as string,
          level: 0,
          summary: c.summary ?? '',
          seqs: c.seqs,
        })),
      ];
      const ledgers = await mergeLiveLedgers(tx, input, previous, live.slice(previous.length));
      const state = clipStateOf(ledgers.live, input.policy, input.countTokens);
      if (clipSeq !== null || input.chunks.length > 0) {
        clipArchiveSeq = minOf([...input.chunks.map((chunk) => minOf(chunk.seqs)), ...(clipSeq === null ? [] : [clipSeq])]);
        const clip = buildClipArchive(
          live,
          { archivedMessages: await countArchivedOriginals(tx, conversation.id) },
          input.policy,
          state.text,
        );
        clipText = clip.text;
        clipTokens = countMessageTokens({ role: clip.role, content: clip.content }, input.countTokens);
        await insertClipArchiveMessage(tx, {
          conversationId: conversation.id,
          seq: clipArchiveSeq,
          role: clip.role,
          content: clip.content,
          tokens: clipTokens,
          ...nativeItemOf(input.chunks, state.text),
        });
      }

      // the totals are recorded before the check: too little progress rolls all of it back
      const after = await recordCompaction(tx, {
        conversationId: conversation.id,
        jobId: job.id,
        watermark: plan.watermarkSeq,
        warnRatio: input.policy.warnRatio,
      });
      checkProgress(input, before.tokens, after.tokens);
      const { identifiers, forgotten } = await measureContextHolds(tx, {
        jobId: job.id,
        conversationId: conversation.id,
        chunks: input.chunks,
        spanLedger: ledgers.span,
        clipText,
        cwd: state.cwd,
      });
      const consolidationJobId = await enqueueConsolidationIfNeeded(tx, job, { batches: live.length, clipTokens }, input.policy);
      const completed = await transitionJob(tx, job.id, ['committing'], {
        status: 'completed',
        finishedAt: new Date(),
        result: {
          tokensBefore: before.tokens,
          tokensAfter: after.tokens,
          messagesArchived: summarizedCount(input.chunks) + plan.rewrites.length,
          batchIds: chunkBatchIds,
          clipArchiveSeq,
          strategy: plan.strategy,
          ...(plan.decision ? { decision: plan.decision } : {}),
          rewrites: { truncated: plan.stats.truncated, masked: plan.stats.masked },
          ...input.llmTotals,
          ...contextFigures(state, after.tokens, clipTokens),
          agentCache: agentCacheEffect(conversation.model, before.tokens, after.tokens),
          identifiers,
          forgotten,
          consolidationJobId,
        },
      });
      if (!completed) throw new Error(`job ${job.id} left 'committing' inside its own transaction`);
      const deliveryId = await recordJobEvent(tx, completed);
      return { kind: 'completed', job: completed, deliveryId, consolidationJobId } as const;
    });
  } catch (error) {
    if (error instanceof InsufficientProgress)
      return { kind: 'insufficient_progress', tokensBefore: error.tokensBefore, tokensAfter: error.tokensAfter };
    throw error;
  }
}

/** SPEC §5.6a: at least `minProgressRatio` freed, and an auto compaction must end below its trigger. */
function checkProgress(input: CommitInput, before: number, after: number): void {
  const freed = before === 0 ? 0 : (before - after) / before;
  const aboveTrigger =
    input.job.trigger !== 'api' && input.job.trigger !== 'tool' && after >= input.policy.triggerRatio * input.conversation.contextLimit;
  if (freed < input.policy.minProgressRatio || aboveTrigger) throw new InsufficientProgress(before, after);
}

/**
 * Strategy native (SPEC §5.10): the provider's item rides on the clip-archive message, which
 * opens the context in that provider's format; its text stays compactd's own clip-archive.
 */
function nativeItemOf(chunks: readonly ChunkRowWithoutLedger[], state: string): { metadata?: Record<string, unknown> } {
  const item: ProviderCompaction | null | undefined = chunks.find((chunk) => chunk.providerItem)?.providerItem;
  return item ? { metadata: { providerCompaction: item, providerCompactionState: state } } : {};
}

function chunkBatchRow(input: CommitInput, chunk: ChunkRowWithoutLedger) {
  const row = batchRow({ conversationId: input.conversation.id, jobId: input.job.id, countTokens: input.countTokens }, chunk, {
    level: 0,
    seqs: chunk.seqs,
    sourceMessages: chunk.seqs.length,
    sourceTokens: chunk.messageTokens,
  });
  // copied from the chunk inside Postgres: a thousand ledgers never make the trip to the worker and back
  return { ...row, ...chunkCopySql(input.job.id, chunk.idx) };
}

/**
 * The ledgers the commit needs, merged a page at a time: every live batch's (the
 * clip-archive's state of the work) and the new chunks' alone (what the span named, SPEC
 * §5.9). The chunks' come from their rows, the previous batches' from theirs; with no
 * previous batch the two merges are the same one.
 */
async function mergeLiveLedgers(
  tx: Tx,
  input: CommitInput,
  previous: readonly BatchSummaryRow[],
  fresh: readonly StatefulBatch[],
): Promise<{ live: Ledger | null; span: Ledger | null }> {
  const idxOf = new Map(fresh.map((b, i) => [b.id, (input.chunks[i] as ChunkRowWithoutLedger).idx]));
  const read = async (ids: readonly string[]): Promise<Map<string, Ledger | null>> => {
    const chunkIds = ids.filter((id) => idxOf.has(id));
    const [chunkLedgers, batchLedgers] = await Promise.all([
      loadChunkLedgers(
        tx,
        input.job.id,
        chunkIds.map((id) => idxOf.get(id) as number),
      ),
      loadBatchLedgers(
        tx,
        ids.filter((id) => !idxOf.has(id)),
      ),
    ]);
    for (const id of chunkIds) batchLedgers.set(id, chunkLedgers.get(idxOf.get(id) as number) ?? null);
    return batchLedgers;
  };
  const span = await mergeStoredLedgers(fresh, read);
  if (previous.length === 0) return { live: span, span };
  return { live: await mergeStoredLedgers([...previous, ...fresh], read), span };
}

/**
 * Summarized originals (each tagged with its batch, which the move reads from the batches just
 * inserted) and the superseded clip-archive leave the active history; rewritten ones keep a
 * new version. One set-based statement.
 */
async function archiveOriginals(tx: Tx, input: CommitInput): Promise<void> {
  const { plan, conversation, job } = input;
  await moveToArchive(tx, {
    conversationId: conversation.id,
    jobId: job.id,
    rewrites: plan.rewrites.map((r) => ({ seq: r.seq, reason: r.reason, content: r.content, tokens: r.tokensAfter })),
    supersededClipSeq: plan.supersededClipArchiveSeq,
  });
}
