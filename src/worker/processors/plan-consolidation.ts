import { chooseBatchesToConsolidate } from '../../compaction/consolidate/index.js';
import { clipOverhead } from '../../compaction/context/index.js';
import { consolidationBudgetWithin, narrativeBudget } from '../../compaction/plan/index.js';
import type { ConsolidationPlan } from '../../compaction/plan-types.js';
import { extractIdentifiers, withoutIdentifierLists } from '../../compaction/summarize/index.js';
import type { Policy } from '../../config/policy.js';
import { insertChunks } from '../../db/repos/chunks.js';
import { currentClipArchive } from '../../db/repos/context-reads.js';
import { transitionJob } from '../../db/repos/jobs.js';
import { loadLiveBatchSummaries } from '../../db/repos/snapshot.js';
import { enqueueSummarizeFlow } from '../../queue/producer.js';
import type { WorkerDeps } from '../deps.js';
import { finishJob, notifyFinished } from '../finish.js';
import type { JobContext } from '../job-context.js';

type PlanDeps = Pick<WorkerDeps, 'db' | 'logger' | 'queues' | 'onJobFinished' | 'countTokens'>;

/**
 * Plan step of a consolidation (SPEC §5.5 step 4, §5.7): choose the oldest live batches that
 * bring the live count back to `maxLiveBatches` — or all of them when the clip-archive is
 * over its token budget — and write one chunk row that merges them, gated on the union of
 * the identifiers they were gated on, with a budget sized to them within what the
 * clip-archive budget leaves.
 */
export async function planConsolidation(ctx: JobContext, deps: PlanDeps): Promise<void> {
  if (ctx.job.plan) return enqueueSummarizeFlow(deps.queues, ctx.job, 1);
  const started = await transitionJob(deps.db, ctx.job.id, ['queued', 'planning'], {
    status: 'planning',
    startedAt: ctx.job.startedAt ?? new Date(),
    attempts: ctx.job.attempts + 1,
  });
  if (!started) return;
  // the choice and the budget read coverage, levels, summaries and identifiers, never a ledger
  const [live, clip] = await Promise.all([
    loadLiveBatchSummaries(deps.db, ctx.conversation.id),
    currentClipArchive(deps.db, ctx.conversation.id),
  ]);
  const choice = chooseBatchesToConsolidate(live, ctx.policy.maxLiveBatches, (clip?.tokens ?? 0) > ctx.policy.clipArchiveMaxTokens);
  if (!choice) {
    const finished = await finishJob(deps.db, ctx.job, 'noop', {
      result: { reason: 'nothing_to_consolidate', message: 'No more live batches than maxLiveBatches' },
    });
    notifyFinished(deps, finished, ctx.job.tenantId);
    return;
  }
  const absorbed = choice.batches;
  // what the merge reads: the summaries without their appended identifier lists (re-appended from the union)
  const sourceTokens = absorbed.reduce((sum, b) => sum + deps.countTokens(withoutIdentifierLists(b.summary)), 0);
  // batches written before identifiers were stored are gated on what their summary names
  const identifiers = [...new Set(absorbed.flatMap((b) => (b.identifiers.length > 0 ? b.identifiers : extractIdentifiers(b.summary))))];
  const plan: ConsolidationPlan = {
    kind: 'consolidation',
    absorbedBatchIds: absorbed.map((b) => b.id),
    level: choice.level,
    chunkCount: 1,
  };
  const persisted = await deps.db.transaction(async (tx) => {
    const moved = await transitionJob(tx, ctx.job.id, ['planning'], {
      status: 'resummarizing',
      plan,
      policy: ctx.policy,
      watermark: ctx.conversation.lastCompactedSeq,
      progress: { chunksDone: 0, chunksTotal: 1 },
    });
    if (!moved) return false;
    await insertChunks(tx, [
      {
        jobId: ctx.job.id,
        idx: 0,
        seqs: [...new Set(absorbed.flatMap((b) => b.seqs))].sort((a, b) => a - b),
        level: choice.level,
        absorbedBatchIds: plan.absorbedBatchIds,
        sourceTokens,
        outputBudget: consolidationBudgetWithin(
          ctx.policy,
          sourceTokens,
          narrativeLeft(ctx.policy, live, plan.absorbedBatchIds, deps.countTokens),
        ),
        identifiers,
      },
    ]);
    return true;
  });
  if (!persisted) return;
  deps.logger.info({ jobId: ctx.job.id, absorbed: absorbed.length, level: choice.level, sourceTokens }, 'consolidation planned');
  await enqueueSummarizeFlow(deps.queues, ctx.job, 1);
}

/** The narrative budget the merged summary may use: the clip-archive's, less the batches that stay live. */
function narrativeLeft(
  policy: Policy,
  live: ReadonlyArray<{ id: string; summaryTokens: number }>,
  absorbed: readonly string[],
  countTokens: PlanDeps['countTokens'],
): number {
  const staying = live.filter((b) => !absorbed.includes(b.id));
  const overhead = clipOverhead(countTokens);
  const framing = overhead.fixed + overhead.perBatch * (staying.length + 1);
  return narrativeBudget(
    policy,
    framing,
    staying.reduce((sum, b) => sum + b.summaryTokens, 0),
  );
}
