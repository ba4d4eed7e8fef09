import { extractChunkIdentifiers } from '../../compaction/identifiers.js';
import type { CompactionPlan } from '../../compaction/plan-types.js';
import { buildSummarizeRequest, previousSummaryText } from '../../compaction/prompt.js';
import { chunkKey, countChunkResults, getChunkResult, saveChunkResult } from '../../db/repos/chunk-results.js';
import { localBudget, type DraftStore } from '../guarded-summary.js';
import { summaryEstimate } from '../../compaction/select.js';
import { getJob, setProgress } from '../../db/repos/jobs.js';
import { loadBatchesByIds, loadMessagesBySeqs, toHistoryMessage, toLiveBatch } from '../../db/repos/snapshot.js';
import { availableProviders } from '../../llm/create-summarizer.js';
import { selectSummarizerModel } from '../../llm/models.js';
import type { SummarizeChunkPayload } from '../../queue/catalog.js';
import type { WorkerDeps } from '../deps.js';
import { summarizeGuarded } from '../guarded-summary.js';
import { isActive, loadJobContext, type JobContext } from '../job-context.js';
import { staleSnapshot } from '../stale.js';

/** How long a job may keep waiting on a provider's retry-after before falling back. */
const MAX_DEFERRAL_MS = 10 * 60_000;

export type SummarizeDeps = Pick<WorkerDeps, 'db' | 'logger' | 'summarizers' | 'countTokens' | 'cancels' | 'config' | 'retryPolicy'>;

/** The model for a job: request > policy > COMPACTD_SUMMARIZER > cheapest configured > local. */
export function selectionFor(ctx: Pick<JobContext, 'options' | 'policy'>, deps: Pick<WorkerDeps, 'summarizers' | 'config'>) {
  return selectSummarizerModel({
    request: ctx.options.model,
    policy: ctx.policy.model,
    configured: deps.config.summarizer.provider === 'local' && deps.config.summarizer.model === undefined ? undefined : deps.config.summarizer,
    availableProviders: availableProviders(deps.summarizers),
  });
}

/**
 * Summarize step of one chunk. A memoized result is returned without calling the LLM again
 * (a finished step is never paid twice); the result is written before the step reports success.
 */
export async function processSummarizeChunk(payload: SummarizeChunkPayload, deps: SummarizeDeps, signal?: AbortSignal): Promise<void> {
  const key = chunkKey(payload.chunkIndex);
  if (await getChunkResult(deps.db, payload.jobId, key)) return;
  const ctx = await loadJobContext(deps.db, payload.jobId);
  if (!ctx || !isActive(ctx.job)) return;
  const plan = ctx.job.plan as CompactionPlan | null;
  const chunk = plan?.chunks[payload.chunkIndex];
  if (!plan || !chunk) throw new Error(`job ${payload.jobId} has no chunk ${payload.chunkIndex}`);

  const rows = await loadMessagesBySeqs(deps.db, ctx.conversation.id, chunk.seqs);
  if (rows.length !== chunk.seqs.length) throw staleSnapshot(payload.jobId, chunk.seqs.length - rows.length);
  const messages = rows.map(toHistoryMessage);
  const previous = previousSummaryText((await loadBatchesByIds(deps.db, plan.previousBatchIds)).map(toLiveBatch));
  const tracked = deps.cancels.track(ctx.job.id, signal);
  try {
    // A cancel that landed between loading the job and tracking it was not seen by the registry.
    if (!isActive((await getJob(deps.db, ctx.job.id)) ?? { status: 'cancelled' })) return;
    const outcome = await summarizeGuarded({
      buildRequest: (missing) =>
        buildSummarizeRequest(messages, previous, ctx.policy, {
          countTokens: deps.countTokens,
          ...(plan.focus ? { focus: plan.focus } : {}),
          ...(missing ? { missingIdentifiers: missing } : {}),
        }),
      identifiers: extractChunkIdentifiers(messages, ctx.policy.maxIdentifiers),
      selection: selectionFor(ctx, deps),
      summarizers: deps.summarizers,
      policy: ctx.policy,
      signal: tracked.signal,
      drafts: draftStore(deps, ctx.job.id, key),
      localMaxTokens: localBudget(summaryEstimate(ctx.policy, chunk.sourceTokens)),
      deferRateLimits: Date.now() - ctx.job.createdAt.getTime() < MAX_DEFERRAL_MS,
      retryPolicy: deps.retryPolicy,
    });
    await saveChunkResult(deps.db, {
      jobId: ctx.job.id,
      chunkKey: key,
      summary: outcome.summary,
      model: outcome.model,
      provider: outcome.provider,
      usage: outcome.usage,
      calls: outcome.calls,
      costUsd: outcome.costUsd,
      latencyMs: outcome.latencyMs,
      identifiersFound: outcome.identifiers.found,
      identifiersTotal: outcome.identifiers.total,
      fallback: outcome.fallback,
    });
    await setProgress(deps.db, ctx.job.id, { chunksDone: await countChunkResults(deps.db, ctx.job.id), chunksTotal: plan.chunks.length });
    if (outcome.fallback) deps.logger.warn({ jobId: ctx.job.id, chunk: payload.chunkIndex, reason: outcome.fallback }, 'chunk summarized by the local fallback');
  } finally {
    tracked.release();
  }
}

/** Drafts live in chunk_results under `<key>.draft` (same memo table, never read as a result). */
export function draftStore(deps: Pick<WorkerDeps, 'db'>, jobId: string, key: string): DraftStore {
  const draftKey = `${key}.draft`;
  return {
    load: async () => {
      const row = await getChunkResult(deps.db, jobId, draftKey);
      return row ? { text: row.summary, usage: row.usage, calls: row.calls, costUsd: row.costUsd, latencyMs: row.latencyMs } : null;
    },
    save: async (draft) => {
      await saveChunkResult(deps.db, {
        jobId,
        chunkKey: draftKey,
        summary: draft.text,
        model: 'draft',
        provider: 'draft',
        usage: draft.usage,
        calls: draft.calls,
        costUsd: draft.costUsd,
        latencyMs: draft.latencyMs,
      });
    },
  };
}
