import { planCompaction } from '../../compaction/plan.js';
import type { CompactionPlan } from '../../compaction/plan-types.js';
import { transitionJob } from '../../db/repos/jobs.js';
import { loadHistory, loadLiveBatches, toLiveBatch } from '../../db/repos/snapshot.js';
import { enqueueSummarizeFlow } from '../../queue/producer.js';
import type { PlanPayload } from '../../queue/catalog.js';
import type { WorkerDeps } from '../deps.js';
import { finishJob, notifyFinished } from '../finish.js';
import { isActive, loadJobContext } from '../job-context.js';

export type PlanDeps = Pick<WorkerDeps, 'db' | 'logger' | 'queues' | 'countTokens' | 'onJobFinished'>;

/**
 * Plan step: snapshot → planCompaction → persist the plan → fan out one summarize step per
 * chunk. Idempotent: a retried step reuses the persisted plan and re-adds the same flow
 * (BullMQ ignores jobs whose ids already exist).
 */
export async function processPlan(payload: PlanPayload, deps: PlanDeps): Promise<void> {
  const ctx = await loadJobContext(deps.db, payload.jobId);
  if (!ctx || !isActive(ctx.job)) return;
  const log = deps.logger.child({ jobId: ctx.job.id, conversationId: ctx.conversation.externalId, tenantId: ctx.job.tenantId });
  let plan = ctx.job.plan as CompactionPlan | null;

  if (!plan) {
    const started = await transitionJob(deps.db, ctx.job.id, ['queued', 'planning'], {
      status: 'planning',
      startedAt: ctx.job.startedAt ?? new Date(),
      attempts: ctx.job.attempts + 1,
    });
    if (!started) return;
    const [messages, live] = await Promise.all([loadHistory(deps.db, ctx.conversation.id), loadLiveBatches(deps.db, ctx.conversation.id)]);
    const result = planCompaction(
      { messages, contextLimit: ctx.conversation.contextLimit, previousSummaries: live.map(toLiveBatch) },
      ctx.policy,
      ctx.request,
      deps.countTokens,
    );
    if (result.kind === 'noop') {
      const watermark = messages.at(-1)?.seq ?? null;
      const finished = await finishJob(deps.db, ctx.job, 'noop', {
        result: { reason: result.reason, message: result.message, tokensBefore: result.tokensBefore, ...(result.tokensAfter === undefined ? {} : { tokensAfter: result.tokensAfter }) },
        pauseAutoUntilSeq: result.reason === 'insufficient_progress' ? watermark : null,
      });
      log.info({ reason: result.reason }, 'compaction noop');
      notifyFinished(deps, finished, ctx.job.tenantId);
      return;
    }
    plan = result;
    const persisted = await transitionJob(deps.db, ctx.job.id, ['planning'], {
      status: 'summarizing',
      plan,
      watermark: plan.watermarkSeq,
      progress: { chunksDone: 0, chunksTotal: plan.chunks.length },
    });
    if (!persisted) return;
    log.info({ chunks: plan.chunks.length, rewrites: plan.rewrites.length, tokensBefore: plan.tokensBefore, projected: plan.tokensAfter }, 'compaction planned');
  }
  await enqueueSummarizeFlow(deps.queues, ctx.job.id, plan.chunks.length);
}
