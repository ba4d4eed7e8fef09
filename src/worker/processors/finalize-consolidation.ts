import { buildClipArchive } from '../../compaction/context/index.js';
import type { ConsolidationPlan } from '../../compaction/plan-types.js';
import { operatorInstructionsResult } from '../../compaction/summarize/index.js';
import { countMessageTokens } from '../../compaction/tokens.js';
import { withConversationLock } from '../../db/locks.js';
import { chunkCopySql, type ChunkRowWithoutLedger, loadChunkLedgers } from '../../db/repos/chunks.js';
import {
  activeTotals,
  archiveMessages,
  countArchivedOriginals,
  insertBatches,
  insertClipArchiveMessage,
  supersedeBatches,
} from '../../db/repos/compaction-writes.js';
import { recordConsolidation } from '../../db/repos/consolidation-writes.js';
import { currentClipArchive } from '../../db/repos/context-reads.js';
import { recordJobEvent } from '../../db/repos/job-outbox.js';
import { type JobRow, transitionJob } from '../../db/repos/jobs.js';
import { loadBatchLedgers, loadLiveBatchSummaries } from '../../db/repos/snapshot.js';
import {
  batchRow,
  clipState,
  contextFigures,
  enqueueConsolidationIfNeeded,
  measureRetention,
  type StatefulBatch,
} from '../commit-parts.js';
import type { WorkerDeps } from '../deps.js';
import { finishJob, notifyFinished } from '../finish.js';
import { enqueueFollowUp } from '../follow-up.js';
import type { JobContext } from '../job-context.js';
import { llmTotals } from '../llm-totals.js';

type FinalizeDeps = Pick<WorkerDeps, 'db' | 'logger' | 'countTokens' | 'onJobFinished' | 'queues'>;

type Outcome =
  { kind: 'completed'; job: JobRow; deliveryId: string | null; next: string | null } | { kind: 'stale' } | { kind: 'not_active' };

/**
 * A consolidation's own single transaction (SPEC §5.5 step 4), under the conversation lock:
 * check the batches it merges are still live, insert the merged batch, supersede them,
 * replace the clip-archive (same position) by one carrying the live batches, and complete
 * the job. When a revert or another commit took the batches away first, nothing changes and
 * the job ends `noop`.
 */
export async function finalizeConsolidation(ctx: JobContext, chunks: readonly ChunkRowWithoutLedger[], deps: FinalizeDeps): Promise<void> {
  const plan = ctx.job.plan as ConsolidationPlan | null;
  const chunk = chunks[0];
  const log = deps.logger.child({ jobId: ctx.job.id, conversationId: ctx.conversation.externalId, tenantId: ctx.job.tenantId });
  const outcome: Outcome =
    !plan || !chunk || chunk.status !== 'done' ? { kind: 'stale' } : await commitConsolidation(ctx, plan, chunk, deps);
  if (outcome.kind === 'stale') {
    const finished = await finishJob(deps.db, ctx.job, 'noop', {
      result: { reason: 'stale', message: 'The batches to merge are no longer live; nothing was changed.', ...llmTotals(chunks) },
    });
    notifyFinished(deps, finished, ctx.job.tenantId);
    return;
  }
  if (outcome.kind === 'completed') {
    log.info({ result: outcome.job.result }, 'consolidation completed');
    notifyFinished(deps, { job: outcome.job, deliveryId: outcome.deliveryId }, ctx.job.tenantId);
    if (outcome.next) await enqueueFollowUp(deps, { id: outcome.next, tenantId: ctx.job.tenantId }, log);
  }
}

async function commitConsolidation(
  ctx: JobContext,
  plan: ConsolidationPlan,
  chunk: ChunkRowWithoutLedger,
  deps: FinalizeDeps,
): Promise<Outcome> {
  const { conversation, job } = ctx;
  return deps.db.transaction(async (tx) => {
    await withConversationLock(tx, conversation.id);
    // without ledgers: the absorbed batches' merged ledger is the chunk's; only the batches that
    // stay live bring theirs into the clip-archive's state (below)
    const live = await loadLiveBatchSummaries(tx, conversation.id);
    const liveIds = new Set(live.map((b) => b.id));
    const clip = await currentClipArchive(tx, conversation.id);
    if (!clip || !plan.absorbedBatchIds.every((id) => liveIds.has(id))) return { kind: 'stale' } as const;
    const committing = await transitionJob(tx, job.id, ['resummarizing', 'summarizing'], { status: 'committing' });
    if (!committing) return { kind: 'not_active' } as const;
    const before = await activeTotals(tx, conversation.id);

    const owner = { conversationId: conversation.id, jobId: job.id, countTokens: deps.countTokens };
    const absorbed = live.filter((b) => plan.absorbedBatchIds.includes(b.id));
    const sourceTokens = absorbed.reduce((sum, b) => sum + b.summaryTokens, 0);
    // the merged ledger (MBs as JSON when a thousand batches merge) and the seqs are copied in SQL
    const [merged] = await insertBatches(tx, [
      {
        ...batchRow(owner, chunk, { level: plan.level, seqs: chunk.seqs, sourceMessages: chunk.seqs.length, sourceTokens }),
        ...chunkCopySql(job.id, chunk.idx),
      },
    ]);
    if (!merged) throw new Error('consolidation batch insert returned nothing');
    await supersedeBatches(tx, plan.absorbedBatchIds, merged.id);

    const absorbedIds = new Set(plan.absorbedBatchIds);
    const staying = live.filter((b) => !absorbedIds.has(b.id));
    const stayingLedgers = await loadBatchLedgers(
      tx,
      staying.map((b) => b.id),
    );
    const after: StatefulBatch[] = [
      ...staying.map((b) => ({ id: b.id, level: b.level, summary: b.summary, seqs: b.seqs, ledger: stayingLedgers.get(b.id) ?? null })),
      {
        id: merged.id,
        level: plan.level,
        summary: chunk.summary ?? '',
        seqs: chunk.seqs,
        ledger: (await loadChunkLedgers(tx, job.id, [chunk.idx])).get(chunk.idx) ?? null,
      },
    ];
    const state = clipState(after, ctx.policy, deps.countTokens);
    await archiveMessages(tx, {
      conversationId: conversation.id,
      jobId: job.id,
      reason: 'superseded_clip',
      seqs: [clip.seq],
      remove: true,
    });
    const next = buildClipArchive(after, { archivedMessages: await countArchivedOriginals(tx, conversation.id) }, ctx.policy, state.text);
    const clipTokens = countMessageTokens({ role: next.role, content: next.content }, deps.countTokens);
    await insertClipArchiveMessage(tx, {
      conversationId: conversation.id,
      seq: clip.seq,
      role: next.role,
      content: next.content,
      tokens: clipTokens,
    });
    const totals = await activeTotals(tx, conversation.id);
    await recordConsolidation(tx, {
      conversationId: conversation.id,
      tokens: totals.tokens,
      messages: totals.messages,
      warning: totals.tokens >= ctx.policy.warnRatio * conversation.contextLimit,
    });
    const clipText = next.text;
    const identifiers = await measureRetention(tx, conversation.id, [chunk], clipText);
    const completed = await transitionJob(tx, job.id, ['committing'], {
      status: 'completed',
      finishedAt: new Date(),
      result: {
        tokensBefore: before.tokens,
        tokensAfter: totals.tokens,
        messagesArchived: 0,
        batchIds: [merged.id],
        absorbedBatchIds: plan.absorbedBatchIds,
        clipArchiveSeq: clip.seq,
        ...llmTotals([chunk]),
        ...operatorInstructionsResult(ctx.policy, 1),
        ...contextFigures(state, totals.tokens, clipTokens),
        identifiers,
      },
    });
    if (!completed) throw new Error(`job ${job.id} left 'committing' inside its own transaction`);
    // the completed row no longer holds the one-active-consolidation index: a follow-up may be recorded
    const nextJob = await enqueueConsolidationIfNeeded(tx, job, { batches: after.length, clipTokens }, ctx.policy);
    return { kind: 'completed', job: completed, deliveryId: await recordJobEvent(tx, completed), next: nextJob } as const;
  });
}
