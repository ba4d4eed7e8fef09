import type { Policy } from '../config/policy.js';
import { appendIdentifierList, findMissingIdentifiers } from '../compaction/identifiers.js';
import type { SummarizeRequest } from '../compaction/types.js';
import { costUsd, LOCAL_MODEL } from '../llm/models.js';
import { addUsage, LlmError, ZERO_USAGE, type LlmUsage, type ProviderName, type Summarizer } from '../llm/port.js';
import type { Summarizers } from '../llm/create-summarizer.js';
import { DEFAULT_RETRY_POLICY, isRetryable, type RetryPolicy } from '../llm/retry.js';

/**
 * One summary with the guards of SPEC §5.6a: invalid output is a failure (the adapters
 * reject it), missing identifiers get one retry naming them and then a verbatim appendix,
 * and a provider that fails for good falls back to the local summarizer when the policy
 * says `fallback`. Every call's usage and cost is accumulated.
 */

export interface GuardedSummary {
  summary: string;
  provider: ProviderName;
  model: string;
  usage: LlmUsage;
  calls: number;
  costUsd: number;
  latencyMs: number;
  identifiers: { found: number; total: number };
  /** why the local summarizer stood in, when it did */
  fallback: string | null;
}

/** A provider's first answer, memoized before the identifier retry so a crash never pays for it twice. */
export interface DraftAnswer {
  text: string;
  usage: LlmUsage;
  calls: number;
  costUsd: number;
  latencyMs: number;
}

export interface DraftStore {
  load(): Promise<DraftAnswer | null>;
  save(draft: DraftAnswer): Promise<void>;
}

export interface GuardedSummaryInput {
  /** builds the request; called again with the identifiers a first answer missed */
  buildRequest(missingIdentifiers?: readonly string[]): SummarizeRequest;
  identifiers: readonly string[];
  selection: { provider: ProviderName; model: string };
  summarizers: Summarizers;
  policy: Pick<Policy, 'onLLMFailure' | 'identifierCheck'>;
  signal: AbortSignal;
  drafts?: DraftStore;
  /**
   * Output budget for the local summarizer, which fills whatever budget it gets: sized to
   * the planner's summary estimate so a local summary frees what the plan projected. (A
   * provider keeps the request's budget: for it the budget is a hard stop, not a target.)
   */
  localMaxTokens?: number;
  /**
   * When the provider asks to come back later than the retry layer waits (429/529 with a
   * long retry-after), hand the step back to the queue instead of falling back: the queue
   * rate-limits itself and retries the step. False once the job has waited long enough.
   */
  deferRateLimits?: boolean;
  /** the retry layer's policy: a retry-after beyond its patience is handed to the queue */
  retryPolicy?: RetryPolicy;
}

/** Thrown to hand a step back to the queue until the provider's retry-after has passed. */
export class DeferStep extends Error {
  constructor(readonly delayMs: number, override readonly cause: LlmError) {
    super(`provider asked to retry after ${delayMs} ms`);
    this.name = 'DeferStep';
  }
}

export async function summarizeGuarded(input: GuardedSummaryInput): Promise<GuardedSummary> {
  const { selection, signal } = input;
  const summarizer: Summarizer | undefined = input.summarizers[selection.provider];
  const tally: Tally = { usage: ZERO_USAGE, calls: 0, cost: 0, latencyMs: 0 };
  const call = async (target: Summarizer, model: string, request: SummarizeRequest) => {
    // `calls` counts provider calls (what is billed); the local summarizer is free
    if (target.provider !== 'local') tally.calls += 1;
    const sized = target.provider === 'local' && input.localMaxTokens !== undefined
      ? { ...request, maxOutputTokens: Math.min(request.maxOutputTokens, input.localMaxTokens) }
      : request;
    const result = await target.summarize(sized, { model, signal });
    tally.usage = addUsage(tally.usage, result.usage);
    tally.cost += target.provider === 'local' ? 0 : costUsd(model, result.usage);
    tally.latencyMs += result.latencyMs;
    return result;
  };

  let text: string;
  let provider = selection.provider;
  let model = selection.model;
  let fallback: string | null = null;
  try {
    if (!summarizer) throw new LlmError('bad_request', `summarizer provider ${selection.provider} is not configured`);
    text = await firstAnswer(input, tally, () => call(summarizer, model, input.buildRequest()));
    const missing = input.policy.identifierCheck ? findMissingIdentifiers(input.identifiers, text) : [];
    if (missing.length > 0) {
      try {
        const retried = (await call(summarizer, model, input.buildRequest(missing))).text;
        if (findMissingIdentifiers(input.identifiers, retried).length < missing.length) text = retried;
      } catch (error) {
        // the first answer is valid; a failed identifier retry must not discard it
        if (signal.aborted) throw error;
      }
    }
  } catch (error) {
    if (input.deferRateLimits && isDeferrable(error, input.retryPolicy)) throw new DeferStep(error.retryAfterMs ?? 0, error);
    if (signal.aborted || input.policy.onLLMFailure === 'fail' || selection.provider === 'local') throw error;
    fallback = error instanceof LlmError ? error.code : 'LLM_FAILED';
    provider = 'local';
    model = LOCAL_MODEL;
    text = (await call(input.summarizers.local, model, input.buildRequest())).text;
  }

  const stillMissing = input.policy.identifierCheck ? findMissingIdentifiers(input.identifiers, text) : [];
  return {
    summary: appendIdentifierList(text, stillMissing),
    provider,
    model,
    usage: tally.usage,
    calls: tally.calls,
    costUsd: tally.cost,
    latencyMs: tally.latencyMs,
    identifiers: { found: input.identifiers.length - stillMissing.length, total: input.identifiers.length },
    fallback,
  };
}

interface Tally {
  usage: LlmUsage;
  calls: number;
  cost: number;
  latencyMs: number;
}

/** The first answer: from the draft store when a previous attempt got that far, else a call (then saved). */
async function firstAnswer(input: GuardedSummaryInput, tally: Tally, call: () => Promise<{ text: string }>): Promise<string> {
  const draft = await input.drafts?.load();
  if (draft) {
    tally.usage = addUsage(tally.usage, draft.usage);
    tally.calls += draft.calls;
    tally.cost += draft.costUsd;
    tally.latencyMs += draft.latencyMs;
    return draft.text;
  }
  const { text } = await call();
  await input.drafts?.save({ text, usage: tally.usage, calls: tally.calls, costUsd: tally.cost, latencyMs: tally.latencyMs });
  return text;
}

/** Smallest local summary budget: below it the seven sections have no room. */
const LOCAL_MIN_TOKENS = 256;

export function localBudget(estimateTokens: number): number {
  return Math.max(LOCAL_MIN_TOKENS, estimateTokens);
}

/** A rate limit whose retry-after is longer than the in-process retry layer is willing to wait. */
function isDeferrable(error: unknown, policy: RetryPolicy = DEFAULT_RETRY_POLICY): error is LlmError {
  return error instanceof LlmError && (error.kind === 'rate_limit' || error.kind === 'overloaded') && error.retryAfterMs !== undefined && !isRetryable(error, policy);
}
