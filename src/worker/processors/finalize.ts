import type { ClipBatch } from '../../compaction/clip-archive.js';
import { extractIdentifiers } from '../../compaction/identifiers.js';
import type { CompactionPlan } from '../../compaction/plan-types.js';
import { chooseBatchesToCollapse } from '../../compaction/resummarize.js';
import { buildResummarizeRequest, buildSummarizeRequest, previousSummaryText } from '../../compaction/prompt.js';
import { chunkKey, getChunkResult, listChunkResults, resummaryKey, saveChunkResult, type ChunkResultRow } from '../../db/repos/chunk-results.js';
import { transitionJob } from '../../db/repos/jobs.js';
import { loadBatchesByIds, loadMessagesBySeqs, toHistoryMessage, toLiveBatch } from '../../db/repos/snapshot.js';
import type { FinalizePayload } from '../../queue/catalog.js';
import { commitCompaction, type ResummaryToCommit } from '../commit.js';
import type { WorkerDeps } from '../deps.js';
import { finishJob, notifyFinished } from '../finish.js';
import { localBudget, summarizeGuarded, type GuardedSummary } from '../guarded-summary.js';
import { summaryEstimate } from '../../compaction/select.js';
import { isActive, loadJobContext, type JobContext } from '../job-context.js';
import { llmTotals } from '../llm-totals.js';
import { draftStore, selectionFor } from './summarize.js';

export type FinalizeDeps = Pick<WorkerDeps, 'db' | 'logger' | 'summarizers' | 'countTokens' | 'cancels' | 'config' | 'onJobFinished' | 'retryPolicy'>;

type PreviousBatch = ClipBatch & { summaryTokens: number };

/**
 * Finalize: make sure every chunk has a summary (local fallback for chunks whose step failed
 * for good, or fail the job under `onLLMFailure: fail`), re-summarize when live batches
 * would exceed `maxLiveBatches`, then commit everything in one transaction.
 */
export async function processFinalize(payload: FinalizePayload, deps: FinalizeDeps, signal?: AbortSignal): Promise<void> {
  const ctx = await loadJobContext(deps.db, payload.jobId);
  if (!ctx || !isActive(ctx.job)) return;
  const plan = ctx.job.plan as CompactionPlan | null;
  if (!plan) throw new Error(`job ${payload.jobId} reached finalize without a plan`);
  const log = deps.logger.child({ jobId: ctx.job.id, conversationId: ctx.conversation.externalId, tenantId: ctx.job.tenantId });

  const results = await completeChunkResults(ctx, plan, deps, signal);
  if (!results) return;
  const previous: PreviousBatch[] = (await loadBatchesByIds(deps.db, plan.previousBatchIds))
    .filter((b) => b.supersededBy === null)
    .map((b) => ({ ...toLiveBatch(b) }));
  const resummary = await resummarizeIfNeeded(ctx, plan, previous, results, deps, signal);
  if (resummary === 'failed') return;

  const outcome = await commitCompaction(deps.db, {
    job: ctx.job,
    conversation: ctx.conversation,
    plan,
    policy: ctx.policy,
    chunkResults: results,
    previousBatches: previous,
    resummary,
    countTokens: deps.countTokens,
    llmTotals: llmTotals([...results.values(), ...(resummary ? [resummary.result] : [])]),
  });
  if (outcome.kind === 'insufficient_progress') {
    const finished = await finishJob(deps.db, ctx.job, 'noop', {
      result: {
        reason: 'insufficient_progress',
        message: 'Compaction would not free enough context (minProgressRatio / trigger threshold); nothing was changed.',
        tokensBefore: outcome.tokensBefore,
        tokensAfter: outcome.tokensAfter,
        ...llmTotals([...results.values()]),
      },
      pauseAutoUntilSeq: plan.watermarkSeq,
    });
    log.warn({ tokensBefore: outcome.tokensBefore, tokensAfter: outcome.tokensAfter }, 'compaction made insufficient progress');
    notifyFinished(deps, finished, ctx.job.tenantId);
    return;
  }
  if (outcome.kind === 'completed') {
    log.info({ result: outcome.job.result }, 'compaction completed');
    notifyFinished(deps, outcome.job, ctx.job.tenantId);
  }
}

/** Every chunk's memoized result; missing ones are summarized locally or fail the job. */
async function completeChunkResults(ctx: JobContext, plan: CompactionPlan, deps: FinalizeDeps, signal?: AbortSignal) {
  const byKey = new Map((await listChunkResults(deps.db, ctx.job.id)).map((r) => [r.chunkKey, r]));
  const results = new Map<number, ChunkResultRow>();
  for (const chunk of plan.chunks) {
    let result = byKey.get(chunkKey(chunk.index));
    if (!result) {
      if (ctx.policy.onLLMFailure === 'fail') {
        const error = ctx.job.error ?? { code: 'LLM_FAILED', message: `chunk ${chunk.index} could not be summarized` };
        const finished = await finishJob(deps.db, ctx.job, 'failed', { error, pauseAutoUntilSeq: plan.watermarkSeq });
        notifyFinished(deps, finished, ctx.job.tenantId);
        return null;
      }
      const messages = (await loadMessagesBySeqs(deps.db, ctx.conversation.id, chunk.seqs)).map(toHistoryMessage);
      const previous = previousSummaryText((await loadBatchesByIds(deps.db, plan.previousBatchIds)).map(toLiveBatch));
      const local = await summarizeGuarded({
        buildRequest: () => buildSummarizeRequest(messages, previous, ctx.policy, { countTokens: deps.countTokens, ...(plan.focus ? { focus: plan.focus } : {}) }),
        identifiers: [],
        selection: { provider: 'local', model: 'local' },
        summarizers: deps.summarizers,
        policy: ctx.policy,
        signal: signal ?? new AbortController().signal,
        localMaxTokens: localBudget(summaryEstimate(ctx.policy, chunk.sourceTokens)),
      });
      result = await saveChunkResult(deps.db, toChunkRow(ctx.job.id, chunkKey(chunk.index), { ...local, fallback: 'CHUNK_STEP_FAILED' }));
    }
    results.set(chunk.index, result);
  }
  return results;
}

/** Collapses the oldest live batches into one when the clip-archive would carry too many. */
async function resummarizeIfNeeded(
  ctx: JobContext,
  plan: CompactionPlan,
  previous: readonly PreviousBatch[],
  results: ReadonlyMap<number, ChunkResultRow>,
  deps: FinalizeDeps,
  signal?: AbortSignal,
): Promise<ResummaryToCommit | null | 'failed'> {
  const candidates = [
    ...previous.map((b) => ({ id: b.id, level: b.level, seqs: b.seqs, summary: b.summary })),
    ...plan.chunks.map((c) => ({ id: `chunk-${c.index}`, level: 0, seqs: c.seqs, summary: results.get(c.index)?.summary ?? '' })),
  ];
  const choice = chooseBatchesToCollapse(candidates, ctx.policy.maxLiveBatches);
  if (!choice) return null;
  const absorbed = choice.batches;
  const key = resummaryKey(0);
  let result = await getChunkResult(deps.db, ctx.job.id, key);
  if (!result) {
    const moved = await transitionJob(deps.db, ctx.job.id, ['summarizing', 'resummarizing'], { status: 'resummarizing' });
    if (!moved) return 'failed';
    const tracked = deps.cancels.track(ctx.job.id, signal);
    try {
      const summary = await summarizeGuarded({
        buildRequest: (missing) =>
          buildResummarizeRequest(absorbed, ctx.policy, { countTokens: deps.countTokens, ...(missing ? { missingIdentifiers: missing } : {}) }),
        // every batch was already checked against its own identifiers: the merge must keep what they kept
        identifiers: extractIdentifiers(absorbed.map((b) => b.summary).join('\n')).slice(0, ctx.policy.maxIdentifiers * absorbed.length),
        selection: selectionFor(ctx, deps),
        summarizers: deps.summarizers,
        policy: ctx.policy,
        signal: tracked.signal,
        drafts: draftStore(deps, ctx.job.id, key),
      });
      result = await saveChunkResult(deps.db, toChunkRow(ctx.job.id, key, summary));
    } finally {
      tracked.release();
    }
  }
  return { absorbed: absorbed.map(({ id, level, seqs }) => ({ ref: id, level, seqs })), result };
}

function toChunkRow(jobId: string, key: string, s: GuardedSummary) {
  return {
    jobId,
    chunkKey: key,
    summary: s.summary,
    model: s.model,
    provider: s.provider,
    usage: s.usage,
    calls: s.calls,
    costUsd: s.costUsd,
    latencyMs: s.latencyMs,
    identifiersFound: s.identifiers.found,
    identifiersTotal: s.identifiers.total,
    fallback: s.fallback,
  };
}
