import { summaryEstimate } from '../compaction/plan/index.js';
import type { JobPlan } from '../compaction/plan-types.js';
import { findMissingIdentifiers, operatorInstructions } from '../compaction/summarize/index.js';
import { type ChunkRow, completeChunk, listChunks, saveNativeAnswer } from '../db/repos/chunks.js';
import { loadNativeSpan } from '../db/repos/native-span.js';
import { AppError } from '../lib/errors.js';
import { costUsd } from '../llm/models.js';
import type { NativeCompactionResult } from '../llm/native-port.js';
import { addUsage } from '../llm/port.js';
import type { AgentSetup } from '../queue/job-options.js';
import { loadChunkSource } from './chunk-source.js';
import type { WorkerDeps } from './deps.js';
import { localBudget, summarizeGuarded } from './guarded-summary.js';
import type { JobContext } from './job-context.js';
import { nativeMessages } from './native-request.js';
import { selectionFor } from './processors/summarize.js';

export type NativeDeps = Pick<
  WorkerDeps,
  'db' | 'logger' | 'summarizers' | 'compactors' | 'countTokens' | 'cancels' | 'config' | 'retryPolicy'
>;

/** Why the providers' compaction cannot serve this job, or its provider. */
export function nativeAvailability(
  agent: AgentSetup | undefined,
  compactors: NativeDeps['compactors'],
  holdsClientItem: boolean,
): { provider: 'anthropic' | 'openai' } | { unavailable: string } {
  if (!agent) return { unavailable: "the agent's provider and model are not known (send `agent` with the compaction, or use the gateway)" };
  if (!compactors?.[agent.provider]) return { unavailable: `provider ${agent.provider} is not configured` };
  if (holdsClientItem) return { unavailable: 'the history holds a compaction item its client asked the provider for (one per request)' };
  return { provider: agent.provider };
}

/**
 * The one call of a native compaction (SPEC §5.10), made in the plan step (no fan-out for one
 * call) and memoized on the plan's single chunk, so a retried step never pays for it twice.
 * The chunk keeps the provider's item for the commit, and a summary in compactd's own words
 * for every other reader: Anthropic's block shows its summary; OpenAI's item is opaque, so
 * the span is summarized by the local summarizer (no LLM call). When the provider's call
 * fails, the span is summarized as `summarize` would, and the chunk says why (fallback).
 */
export async function compactNatively(deps: NativeDeps, ctx: JobContext): Promise<void> {
  const [chunk] = await listChunks(deps.db, ctx.job.id);
  if (!chunk || chunk.status === 'done') return;
  const agent = ctx.options.agent;
  const compactor = agent ? deps.compactors?.[agent.provider] : undefined;
  const log = deps.logger.child({ jobId: ctx.job.id, conversationId: ctx.conversation.externalId, tenantId: ctx.job.tenantId });
  const tracked = deps.cancels.track(ctx.job.id);
  try {
    const plan = ctx.job.plan as JobPlan | null;
    const clipSeq = plan?.supersededClipArchiveSeq ?? null;
    // a retried step whose call was answered reads the memo instead of paying again
    let native: NativeCompactionResult | null = memoizedAnswer(chunk);
    let failure: string | null = compactor || native ? null : 'NATIVE_UNAVAILABLE';
    if (agent && compactor && !native) {
      const seqs = plan?.nativeRequestSeqs ?? chunk.seqs;
      const rows = await loadNativeSpan(deps.db, ctx.conversation.id, clipSeq === null ? seqs : [clipSeq, ...seqs]);
      const request = nativeMessages(agent.provider, agent.model, agent.system, rows);
      const instructions = operatorInstructions(ctx.policy);
      try {
        native = await compactor.compact(
          {
            model: agent.model,
            ...(request.system === undefined ? {} : { system: request.system }),
            ...(agent.tools === undefined ? {} : { tools: agent.tools }),
            messages: request.messages,
            // the operator's domain instructions (policy.summaryInstructions) steer the provider's summary too
            ...(instructions === undefined ? {} : { instructions }),
          },
          { signal: tracked.signal },
        );
        // keyed on the model the agent asks for (the provider may answer with a dated name)
        native = { ...native, model: agent.model };
        await saveNativeAnswer(deps.db, ctx.job.id, chunk.idx, native);
      } catch (error) {
        failure = `NATIVE_FAILED: ${error instanceof AppError ? error.code : 'ERROR'}`;
        log.warn({ err: error }, 'provider compaction failed: the span is summarized by compactd instead');
      }
    }
    await completeChunk(deps.db, ctx.job.id, chunk.idx, await chunkResult(deps, ctx, chunk, native, failure, tracked.signal));
  } finally {
    tracked.release();
  }
}

/** The provider's answer memoized on a pending chunk by an earlier attempt of the step, if any. */
function memoizedAnswer(chunk: ChunkRow): NativeCompactionResult | null {
  const item = chunk.providerItem;
  const memo = chunk.draftUsage;
  if (!item || !memo) return null;
  const { calls: _calls, costUsd: _cost, latencyMs, ...usage } = memo;
  const content = item.item['content'];
  return {
    provider: item.provider,
    item: item.item,
    summary: item.provider === 'anthropic' && typeof content === 'string' ? content : null,
    beta: item.beta,
    model: item.model,
    usage,
    latencyMs,
  };
}

async function chunkResult(
  deps: NativeDeps,
  ctx: JobContext,
  chunk: ChunkRow,
  native: NativeCompactionResult | null,
  failure: string | null,
  signal: AbortSignal,
) {
  const job = {
    id: ctx.job.id,
    conversationId: ctx.conversation.id,
    trigger: ctx.job.trigger,
    header: null,
    focus: ctx.request.focus ?? null,
  };
  const source = await loadChunkSource(deps, job, chunk, ctx.policy);
  if (!source) throw new Error(`job ${ctx.job.id}: the native span has no source`);
  const ledger = await source.ledger();
  if (native && native.summary !== null) {
    return {
      summary: native.summary,
      provider: native.provider,
      model: native.model,
      usage: native.usage,
      calls: 1,
      costUsd: costUsd(native.model, native.usage),
      latencyMs: native.latencyMs,
      identifiers: source.identifiers,
      identifiersFound: source.identifiers.length - findMissingIdentifiers(source.identifiers, native.summary).length,
      ledger,
      fallback: null,
      providerItem: { provider: native.provider, model: native.model, beta: native.beta, item: native.item },
    };
  }
  // an opaque item (compactd's own words come from the local summarizer), or a failed call (the job's summarizer)
  const selection = native ? { provider: 'local' as const, model: 'local' } : selectionFor(ctx, deps);
  const own = await summarizeGuarded({
    buildRequest: source.buildRequest,
    budget: chunk.outputBudget,
    identifiers: source.identifiers,
    selection,
    summarizers: deps.summarizers,
    policy: ctx.policy,
    signal,
    localMaxTokens: localBudget(summaryEstimate(ctx.policy, chunk.sourceTokens)),
    retryPolicy: deps.retryPolicy,
  });
  const usage = native ? addUsage(native.usage, own.usage) : own.usage;
  return {
    summary: own.summary,
    provider: native?.provider ?? own.provider,
    model: native?.model ?? own.model,
    usage,
    calls: own.calls + (native ? 1 : 0),
    costUsd: own.costUsd + (native ? costUsd(native.model, native.usage) : 0),
    latencyMs: own.latencyMs + (native?.latencyMs ?? 0),
    identifiers: source.identifiers,
    identifiersFound: own.identifiers.found,
    ledger,
    fallback: failure ?? own.fallback,
    providerItem: native ? { provider: native.provider, model: native.model, beta: native.beta, item: native.item } : null,
  };
}
