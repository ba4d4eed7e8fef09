import type { Ledger } from '../../compaction/ledger/index.js';
import { chunkOutputBudget, summaryEstimate } from '../../compaction/plan/index.js';
import type { Policy } from '../../config/policy.js';
import { type ChunkRow, completeChunk, loadChunkStep, saveChunkDraft } from '../../db/repos/chunks.js';
import { configuredSummarizer } from '../../llm/configured-models.js';
import { availableProviders } from '../../llm/create-summarizer.js';
import { selectSummarizerModel } from '../../llm/models.js';
import type { SummarizeChunkPayload } from '../../queue/catalog.js';
import { type FairSlots, ParkStep, type SlotEntry } from '../../queue/fair-slots.js';
import { type CompactionOptions, CompactionOptionsSchema } from '../../queue/job-options.js';
import { loadChunkSource } from '../chunk-source.js';
import type { WorkerDeps } from '../deps.js';
import { type DraftStore, type GuardedSummary, localBudget, summarizeGuarded } from '../guarded-summary.js';
import { frozenPolicy, isActive } from '../job-context.js';

/** How long a job may keep waiting on a provider's retry-after before falling back. */
const MAX_DEFERRAL_MS = 10 * 60_000;

export type SummarizeDeps = Pick<WorkerDeps, 'db' | 'logger' | 'summarizers' | 'countTokens' | 'cancels' | 'config' | 'retryPolicy'>;

/** The model for a job: request > policy > COMPACTD_SUMMARIZER > cheapest configured > local. */
export function selectionFor(
  ctx: { options: CompactionOptions; policy: Pick<Policy, 'model'> },
  deps: Pick<WorkerDeps, 'summarizers' | 'config'>,
) {
  return selectSummarizerModel({
    request: ctx.options.model,
    policy: ctx.policy.model,
    configured: configuredSummarizer(deps.config),
    availableProviders: availableProviders(deps.summarizers),
  });
}

/** The step's place in the fair share: its BullMQ id and tag, and the slots its calls need. */
export interface SummarizeTurn {
  slots: FairSlots;
  stepId: string;
  priority: number;
}

/** A provider slot for this tenant's step, or ParkStep (the queue delays the step until one frees). */
async function takeSlot(
  turn: SummarizeTurn | undefined,
  provider: string,
  tenantId: string,
  signal: AbortSignal,
): Promise<SlotEntry | undefined> {
  // the local summarizer is CPU in this process: no provider slot to share
  if (turn === undefined || provider === 'local') return undefined;
  const entry = await turn.slots.enter({ provider, tenantId, stepId: turn.stepId, priority: turn.priority }, signal);
  if (entry.kind === 'parked') throw new ParkStep(entry.parkMs);
  return entry;
}

async function release(slot: SlotEntry | undefined): Promise<void> {
  // leave() is idempotent: the early release and the one in `finally` are the same
  if (slot?.kind === 'admitted') await slot.leave();
}

/**
 * Summarize step of one chunk: reads its own row (with the job's status, frozen policy and
 * header), makes one round of calls, and completes the row — the memo a retry or finalize
 * reads, so a finished step is never paid twice. Tracking the cancel first closes the
 * window where a cancel lands between the load and the call.
 */
export async function processSummarizeChunk(
  payload: SummarizeChunkPayload,
  deps: SummarizeDeps,
  signal?: AbortSignal,
  turn?: SummarizeTurn,
): Promise<void> {
  const tracked = deps.cancels.track(payload.jobId, signal);
  let slot: SlotEntry | undefined;
  try {
    const step = await loadChunkStep(deps.db, payload.jobId, payload.chunkIndex);
    if (!step || step.chunk.status === 'done' || !isActive(step.job)) return;
    if (!step.job.policy) throw new Error(`job ${payload.jobId} has chunks but no frozen policy`);
    const policy = frozenPolicy(step.job.policy);
    const options = CompactionOptionsSchema.parse(step.job.options);
    const selection = selectionFor({ options, policy }, deps);
    slot = await takeSlot(turn, selection.provider, step.job.tenantId, tracked.signal);
    const source = await loadChunkSource(deps, step.job, step.chunk, policy);
    if (!source) return;
    const repairs = policy.identifierCheck && policy.identifierRepair === 'call';
    const outcome = await summarizeGuarded({
      buildRequest: source.buildRequest,
      buildRepairRequest: source.buildRepairRequest,
      budget: step.chunk.outputBudget,
      // a chunk's cap fits what it holds, not its share of the clip-archive budget; a
      // consolidation, which brings the clip-archive back within that budget, keeps its own
      ...(step.job.trigger === 'consolidate' ? {} : { capTarget: chunkOutputBudget(policy, step.chunk.sourceTokens) }),
      identifiers: source.identifiers,
      selection,
      summarizers: deps.summarizers,
      policy,
      signal: tracked.signal,
      ...(repairs ? { drafts: draftStore(deps, step.chunk) } : {}),
      localMaxTokens: localBudget(summaryEstimate(policy, step.chunk.sourceTokens)),
      deferRateLimits: Date.now() - step.job.createdAt.getTime() < MAX_DEFERRAL_MS,
      retryPolicy: deps.retryPolicy,
    });
    // the calls are done: the slot goes to the next step before this one writes its result
    await release(slot);
    await completeChunk(deps.db, step.job.id, step.chunk.idx, chunkOutcome(outcome, source.identifiers, await source.ledger()));
    if (outcome.fallback)
      deps.logger.warn(
        {
          jobId: step.job.id,
          conversationId: step.job.conversationExternalId,
          tenantId: step.job.tenantId,
          chunk: step.chunk.idx,
          reason: outcome.fallback,
        },
        'chunk summarized by the local fallback',
      );
    if (outcome.completedSections.length > 0)
      deps.logger.info(
        { jobId: step.job.id, chunk: step.chunk.idx, sections: outcome.completedSections },
        'answer cut at its cap kept; the sections it never reached were extracted from the source',
      );
  } finally {
    await release(slot);
    tracked.release();
  }
}

export function chunkOutcome(outcome: GuardedSummary, identifiers: readonly string[], ledger: Ledger | null) {
  return {
    summary: outcome.summary,
    provider: outcome.provider,
    model: outcome.model,
    usage: outcome.usage,
    calls: outcome.calls,
    costUsd: outcome.costUsd,
    latencyMs: outcome.latencyMs,
    identifiers,
    identifiersFound: outcome.identifiers.found,
    ledger,
    fallback: outcome.fallback,
  };
}

/** Drafts live on the chunk row (kept only under `identifierRepair: call`). */
function draftStore(deps: Pick<WorkerDeps, 'db'>, chunk: ChunkRow): DraftStore {
  return {
    load: async () => {
      if (chunk.draft === null || !chunk.draftUsage) return null;
      const { calls, costUsd, latencyMs, ...usage } = chunk.draftUsage;
      return { text: chunk.draft, usage, calls, costUsd, latencyMs };
    },
    save: async (draft) => {
      await saveChunkDraft(deps.db, chunk.jobId, chunk.idx, {
        text: draft.text,
        usage: { ...draft.usage, calls: draft.calls, costUsd: draft.costUsd, latencyMs: draft.latencyMs },
      });
    },
  };
}
