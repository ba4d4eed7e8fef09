import { buildChunkHeader, clipOverhead } from '../../compaction/context/index.js';
import {
  chooseStrategy,
  chunkOutputBudgets,
  narrativeBudget,
  planCompaction,
  planNative,
  resolveTarget,
  type StrategyDecision,
} from '../../compaction/plan/index.js';
import type { CompactionNoop, CompactionPlan, JobPlan, LiveBatch, PlanResult, PlanSnapshot } from '../../compaction/plan-types.js';
import type { HistoryMessage } from '../../compaction/types.js';
import type { Policy } from '../../config/policy.js';
import { insertChunks } from '../../db/repos/chunks.js';
import { transitionJob } from '../../db/repos/jobs.js';
import { holdsClientProviderItem } from '../../db/repos/native-span.js';
import { loadMessageContent, loadPlanHistory, loadRewriteCandidates, type PlanHistory } from '../../db/repos/plan-snapshot.js';
import { loadLiveBatches, toLiveBatch } from '../../db/repos/snapshot.js';
import type { PlanPayload } from '../../queue/catalog.js';
import { enqueueSummarizeFlow } from '../../queue/producer.js';
import type { WorkerDeps } from '../deps.js';
import { finishJob, notifyFinished } from '../finish.js';
import { isActive, type JobContext, loadJobContext } from '../job-context.js';
import { compactNatively, nativeAvailability, type NativeDeps } from '../native.js';
import { planConsolidation } from './plan-consolidation.js';

export type PlanDeps = Pick<WorkerDeps, 'db' | 'logger' | 'queues' | 'countTokens' | 'onJobFinished'> & Partial<NativeDeps>;

/**
 * Plan step: snapshot → planCompaction → in one transaction, the chunk rows, the job-level
 * plan and the frozen policy → fan out one summarize step per chunk. Idempotent: a retried
 * step reuses the persisted plan and re-adds the same flow (BullMQ ignores known job ids).
 */
export async function processPlan(payload: PlanPayload, deps: PlanDeps): Promise<void> {
  const ctx = await loadJobContext(deps.db, payload.jobId);
  if (!ctx || !isActive(ctx.job)) return;
  if (ctx.job.trigger === 'consolidate') return planConsolidation(ctx, deps);
  const log = deps.logger.child({ jobId: ctx.job.id, conversationId: ctx.conversation.externalId, tenantId: ctx.job.tenantId });
  let chunkCount = (ctx.job.plan as JobPlan | null)?.chunkCount;

  if (chunkCount === undefined) {
    const started = await transitionJob(deps.db, ctx.job.id, ['queued', 'planning'], {
      status: 'planning',
      startedAt: ctx.job.startedAt ?? new Date(),
      attempts: ctx.job.attempts + 1,
    });
    if (!started) return;
    const planned = await planFromSnapshot(deps, ctx);
    if (planned.kind === 'noop') {
      const { result, watermark } = planned;
      const finished = await finishJob(deps.db, ctx.job, 'noop', {
        result: {
          reason: result.reason,
          message: result.message,
          tokensBefore: result.tokensBefore,
          ...(result.tokensAfter === undefined ? {} : { tokensAfter: result.tokensAfter }),
        },
        pauseAutoUntilSeq: result.reason === 'insufficient_progress' ? watermark : null,
      });
      log.info({ reason: result.reason }, 'compaction noop');
      notifyFinished(deps, finished, ctx.job.tenantId);
      return;
    }
    const { result, header, budgets } = planned;
    if (!(await persistPlan(deps, ctx, result, header, budgets))) return;
    chunkCount = result.chunks.length;
    log.info(
      { chunks: chunkCount, rewrites: result.rewrites.length, tokensBefore: result.tokensBefore, projected: result.tokensAfter },
      'compaction planned',
    );
    if (result.strategy === 'native')
      await compactNatively(nativeDeps(deps), { ...ctx, job: { ...ctx.job, plan: jobPlanOf(result, header) } });
  } else if ((ctx.job.plan as JobPlan).strategy === 'native') {
    // a retried step: the call is made unless its answer was memoized on the chunk
    await compactNatively(nativeDeps(deps), ctx);
  }
  await enqueueSummarizeFlow(deps.queues, ctx.job, chunkCount);
}

type Planned =
  | { kind: 'noop'; result: CompactionNoop; watermark: number | null }
  | { kind: 'plan'; result: CompactionPlan; header: string | null; budgets: number[] };

/**
 * The snapshot read and planned, with the chunks' header and budgets. A function of its own
 * so the snapshot (a metadata object per active message, ~15 MB at 100,000) is garbage once
 * it returns: held by the step's frame, it stayed live while the plan was stored and the
 * summarize flow enqueued, seconds into the summarize steps.
 */
async function planFromSnapshot(deps: PlanDeps, ctx: JobContext): Promise<Planned> {
  const [history, live] = await Promise.all([
    loadPlanHistory(deps.db, ctx.conversation.id, ctx.policy.scoring.keywords),
    loadLiveBatches(deps.db, ctx.conversation.id),
  ]);
  const { messages } = history;
  if (usesRewriteTiers(ctx)) await attachRewriteCandidates(deps, ctx, messages);
  const liveBatches = live.map(toLiveBatch);
  const holdsClientItem = ctx.options.agent ? await holdsClientProviderItem(deps.db, ctx.conversation.id) : false;
  const result = planWithStrategy(
    { messages, contextLimit: ctx.conversation.contextLimit, previousSummaries: liveBatches },
    ctx,
    deps,
    holdsClientItem,
  );
  if (result.kind === 'noop') return { kind: 'noop', result, watermark: messages.at(-1)?.seq ?? null };
  const header =
    result.chunks.length > 0 && result.strategy !== 'native'
      ? buildChunkHeader(await latestRequest(deps, ctx, history), liveBatches, deps.countTokens)
      : null;
  return { kind: 'plan', result, header, budgets: outputBudgets(ctx.policy, result, liveBatches, deps.countTokens) };
}

/**
 * SPEC §5.10: the strategy this compaction runs (`auto`'s rule decides between the provider's
 * compaction and compactd's parallel chunks), then its plan; the decision travels in the plan
 * to the job result.
 */
function planWithStrategy(snapshot: PlanSnapshot, ctx: JobContext, deps: PlanDeps, holdsClientItem: boolean): PlanResult {
  const requested = ctx.request.strategy ?? ctx.policy.strategy;
  const decision: StrategyDecision = chooseStrategy({
    requested,
    native: nativeAvailability(ctx.options.agent, deps.compactors, holdsClientItem),
    spanTokens: snapshot.messages.reduce((sum, m) => sum + m.tokens, 0),
    contextLimit: snapshot.contextLimit,
    agentWaiting: ctx.options.agentWaiting === true,
    latencyBudgetMs: ctx.policy.nativeLatencyBudgetMs,
  });
  const result =
    decision.strategy === 'native'
      ? planNative(snapshot, ctx.policy, ctx.request, ctx.options.agent?.provider ?? 'anthropic')
      : planCompaction(snapshot, ctx.policy, { ...ctx.request, strategy: decision.strategy }, deps.countTokens);
  if (result.kind === 'plan' && (requested === 'auto' || requested === 'native')) result.decision = decision;
  return result;
}

function nativeDeps(deps: PlanDeps): NativeDeps {
  const { summarizers, cancels, config, retryPolicy } = deps;
  if (!summarizers || !cancels || !config || !retryPolicy) throw new Error('a native compaction needs the worker deps of a summarize step');
  return { ...deps, summarizers, cancels, config, retryPolicy };
}

function jobPlanOf(plan: CompactionPlan, header: string | null): JobPlan {
  const { chunks, previousBatchIds: _previous, compressedSeqs: _compressed, ...rest } = plan;
  return { ...rest, chunkCount: chunks.length, header };
}

/** The chunk rows, the job-level plan and the frozen policy, all or nothing. */
async function persistPlan(
  deps: Pick<PlanDeps, 'db'>,
  ctx: JobContext,
  plan: CompactionPlan,
  header: string | null,
  budgets: readonly number[],
): Promise<boolean> {
  const jobPlan = jobPlanOf(plan, header);
  const { chunks } = plan;
  return deps.db.transaction(async (tx) => {
    const persisted = await transitionJob(tx, ctx.job.id, ['planning'], {
      status: 'summarizing',
      plan: jobPlan,
      policy: ctx.policy,
      watermark: plan.watermarkSeq,
      progress: { chunksDone: 0, chunksTotal: chunks.length },
    });
    if (!persisted) return false;
    await insertChunks(
      tx,
      chunks.map((chunk) => ({
        jobId: ctx.job.id,
        idx: chunk.index,
        seqs: chunk.seqs,
        sourceTokens: chunk.sourceTokens,
        messageTokens: chunk.messageTokens,
        outputBudget: budgets[chunk.index] as number,
        truncatedForPrompt: chunk.truncatedForPrompt,
      })),
    );
    return true;
  });
}

/**
 * SPEC §5.7: the new chunks share what the clip-archive budget leaves after the ledger, the
 * framing of every batch that will be live and the live summaries that stay.
 */
function outputBudgets(policy: Policy, plan: CompactionPlan, live: readonly LiveBatch[], countTokens: PlanDeps['countTokens']): number[] {
  const overhead = clipOverhead(countTokens);
  const framing = overhead.fixed + overhead.perBatch * (live.length + plan.chunks.length);
  const kept = live.reduce((sum, batch) => sum + batch.summaryTokens, 0);
  return chunkOutputBudgets(
    policy,
    plan.chunks.map((chunk) => chunk.sourceTokens),
    narrativeBudget(policy, framing, kept),
  );
}

/** Whether the plan may run Tier 1/2 (truncate, mask), the only part of planning that reads content. */
function usesRewriteTiers(ctx: JobContext): boolean {
  const strategy = ctx.request.strategy ?? ctx.policy.strategy;
  return (
    strategy === 'mask' || (strategy === 'auto' && resolveTarget(ctx.request, ctx.policy, strategy, ctx.conversation.contextLimit) !== null)
  );
}

/** Gives the messages Tier 1/2 may rewrite (and the calls they answer) their content; the rest stay metadata. */
async function attachRewriteCandidates(deps: Pick<PlanDeps, 'db'>, ctx: JobContext, messages: HistoryMessage[]): Promise<void> {
  const minTokens = Math.min(ctx.policy.tier1.maxTokens + 1, ctx.policy.tier2.minTokens);
  const contents = await loadRewriteCandidates(deps.db, ctx.conversation.id, minTokens);
  for (const message of messages) {
    const content = contents.get(message.seq);
    if (content) message.content = content;
  }
}

/** The user's latest request with its content (the chunks' header reads it), or none. */
async function latestRequest(deps: Pick<PlanDeps, 'db'>, ctx: JobContext, history: PlanHistory): Promise<HistoryMessage[]> {
  if (history.latestRequestSeq === null) return [];
  const message = history.messages.find((m) => m.seq === history.latestRequestSeq);
  const content = await loadMessageContent(deps.db, ctx.conversation.id, history.latestRequestSeq);
  if (!message || !content) return [];
  const { features: _features, ...rest } = message;
  return [{ ...rest, content }];
}
