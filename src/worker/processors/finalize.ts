import { summaryEstimate } from '../../compaction/plan/index.js';
import type { JobPlan } from '../../compaction/plan-types.js';
import { operatorInstructionsResult } from '../../compaction/summarize/index.js';
import { type ChunkRowWithoutLedger, completeChunk, listChunksWithoutLedger } from '../../db/repos/chunks.js';
import type { FinalizePayload } from '../../queue/catalog.js';
import { loadChunkSource } from '../chunk-source.js';
import { commitCompaction } from '../commit.js';
import type { WorkerDeps } from '../deps.js';
import { finishJob, notifyFinished } from '../finish.js';
import { enqueueFollowUp } from '../follow-up.js';
import { localBudget, summarizeGuarded } from '../guarded-summary.js';
import { isActive, type JobContext, loadJobContext } from '../job-context.js';
import { llmTotals } from '../llm-totals.js';
import { indexRecallAfterCommit } from '../recall-indexing.js';
import { finalizeConsolidation } from './finalize-consolidation.js';
import { chunkOutcome } from './summarize.js';

export type FinalizeDeps = Pick<
  WorkerDeps,
  'db' | 'logger' | 'summarizers' | 'countTokens' | 'cancels' | 'config' | 'onJobFinished' | 'retryPolicy' | 'queues'
>;

/**
 * Finalize: make sure every chunk has a summary (local fallback for chunks whose step failed
 * for good, or fail the job under `onLLMFailure: fail`), then commit in one transaction. A
 * consolidation the commit recorded is enqueued afterwards and never awaited.
 */
export async function processFinalize(payload: FinalizePayload, deps: FinalizeDeps, signal?: AbortSignal): Promise<void> {
  const ctx = await loadJobContext(deps.db, payload.jobId);
  if (!ctx || !isActive(ctx.job)) return;
  const chunks = await completeChunks(ctx, deps, signal);
  if (!chunks) return;
  if (ctx.job.trigger === 'consolidate') return finalizeConsolidation(ctx, chunks, deps);
  const plan = ctx.job.plan as JobPlan | null;
  if (!plan) throw new Error(`job ${payload.jobId} reached finalize without a plan`);
  const log = deps.logger.child({ jobId: ctx.job.id, conversationId: ctx.conversation.externalId, tenantId: ctx.job.tenantId });

  // the operator's instructions every chunk request carried are part of what the job reports about its calls
  const totals = { ...llmTotals(chunks), ...operatorInstructionsResult(ctx.policy, chunks.length) };
  const outcome = await commitCompaction(deps.db, {
    job: ctx.job,
    conversation: ctx.conversation,
    plan,
    policy: ctx.policy,
    chunks,
    countTokens: deps.countTokens,
    llmTotals: totals,
  });
  if (outcome.kind === 'insufficient_progress') {
    const finished = await finishJob(deps.db, ctx.job, 'noop', {
      result: {
        reason: 'insufficient_progress',
        message: 'Compaction would not free enough context (minProgressRatio / trigger threshold); nothing was changed.',
        tokensBefore: outcome.tokensBefore,
        tokensAfter: outcome.tokensAfter,
        ...totals,
      },
      pauseAutoUntilSeq: plan.watermarkSeq,
    });
    log.warn({ tokensBefore: outcome.tokensBefore, tokensAfter: outcome.tokensAfter }, 'compaction made insufficient progress');
    notifyFinished(deps, finished, ctx.job.tenantId);
    return;
  }
  if (outcome.kind === 'completed') {
    log.info({ result: outcome.job.result }, 'compaction completed');
    notifyFinished(deps, { job: outcome.job, deliveryId: outcome.deliveryId }, ctx.job.tenantId);
    if (outcome.consolidationJobId) await enqueueFollowUp(deps, { id: outcome.consolidationJobId, tenantId: ctx.job.tenantId }, log);
    await indexRecallAfterCommit(deps.db, ctx.conversation.id, log);
  }
}

/** Every chunk done: missing ones are summarized locally, or the job fails under `onLLMFailure: fail`. */
async function completeChunks(ctx: JobContext, deps: FinalizeDeps, signal?: AbortSignal): Promise<ChunkRowWithoutLedger[] | null> {
  const chunks = await listChunksWithoutLedger(deps.db, ctx.job.id);
  const pending = chunks.filter((c) => c.status !== 'done');
  if (pending.length === 0) return chunks;
  if (ctx.policy.onLLMFailure === 'fail') {
    const error = ctx.job.error ?? { code: 'LLM_FAILED', message: `chunk ${pending[0]?.idx} could not be summarized` };
    const finished = await finishJob(deps.db, ctx.job, 'failed', { error, pauseAutoUntilSeq: ctx.job.watermark });
    notifyFinished(deps, finished, ctx.job.tenantId);
    return null;
  }
  const plan = ctx.job.plan as { header?: string | null; focus?: string | null } | null;
  const job = {
    id: ctx.job.id,
    conversationId: ctx.conversation.id,
    trigger: ctx.job.trigger,
    header: plan?.header ?? null,
    focus: plan?.focus ?? null,
  };
  for (const chunk of pending) {
    const source = await loadChunkSource(deps, job, chunk, ctx.policy);
    if (!source) continue;
    const local = await summarizeGuarded({
      buildRequest: source.buildRequest,
      budget: chunk.outputBudget,
      identifiers: source.identifiers,
      selection: { provider: 'local', model: 'local' },
      summarizers: deps.summarizers,
      policy: ctx.policy,
      signal: signal ?? new AbortController().signal,
      localMaxTokens: localBudget(summaryEstimate(ctx.policy, chunk.sourceTokens)),
    });
    await completeChunk(
      deps.db,
      ctx.job.id,
      chunk.idx,
      chunkOutcome({ ...local, fallback: 'CHUNK_STEP_FAILED' }, source.identifiers, await source.ledger()),
    );
  }
  return listChunksWithoutLedger(deps.db, ctx.job.id);
}
