import { outputCap, repairListChars } from '../compaction/plan/index.js';
import {
  completeCutAnswer,
  findMissingIdentifiers,
  identifiersWithin,
  type SectionName,
  sectionsCutOff,
} from '../compaction/summarize/index.js';
import type { SummarizeRequest } from '../compaction/types.js';
import type { Policy } from '../config/policy.js';
import type { Summarizers } from '../llm/create-summarizer.js';
import { PaceBook } from '../llm/hedge-timing.js';
import { costUsd, LOCAL_MODEL, outputLimitFor } from '../llm/models.js';
import { addUsage, LlmError, type LlmUsage, type ProviderName, type SummarizeOptions, type Summarizer, ZERO_USAGE } from '../llm/port.js';
import { DEFAULT_RETRY_POLICY, isRetryable, type RetryPolicy } from '../llm/retry.js';
import { answerWithinCap, type CappedAnswer, type SendAnswer } from './hedged-answer.js';

/**
 * One summary with the guards of SPEC §5.6a: invalid output is a failure (the adapters
 * reject it); the request asks for the budget's length with a cap above what the chunk holds,
 * an answer cut at that cap is kept (the sections it never reached completed from the same
 * source by the local extractor, with no call), and a straggling call gets a hedged second
 * request raced beside it (hedged-answer.ts) — never a second call in series after a slow or
 * cut answer; the identifiers the answer still lacks are counted (under
 * `identifierRepair: call`, first asked for in a small repair request holding only the
 * draft's gaps) — never appended as a raw list: the state ledger and the archive hold them
 * exactly; a provider that fails for good falls back to the local summarizer when the policy
 * says `fallback`. Every call's usage and cost is accumulated, a cut answer's and a
 * cancelled hedge's included. No second full call is ever made for identifiers.
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
  /** sections of an answer cut at its cap that the local extractor wrote (none when it reached them all) */
  completedSections: readonly SectionName[];
}

/** A provider's first answer, memoized before a repair call so a crash never pays for it twice. */
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
  /** the request asking for `target` tokens, sent with max_tokens `cap` (the target when not given) */
  buildRequest(target: number, cap?: number): SummarizeRequest;
  /** a small request asking for the missing identifiers only (used under `identifierRepair: call`) */
  buildRepairRequest?(draft: string, missing: readonly string[]): SummarizeRequest;
  /** the length the directive asks for (the chunk's output budget); max_tokens is a cap above it */
  budget: number;
  /**
   * The length the cap is sized for when above `budget`: what a chunk's source is worth on its
   * own (budget.ts chunkOutputBudget), not its share of the clip-archive budget, so a model
   * that writes more than it was asked is not cut at a few hundred tokens (the consolidation
   * after the commit brings the clip-archive back within its budget). Default: the budget.
   */
  capTarget?: number;
  /** every identifier the summary must hold (what the gate checks; more than the request names) */
  identifiers: readonly string[];
  selection: { provider: ProviderName; model: string };
  summarizers: Summarizers;
  policy: Pick<Policy, 'onLLMFailure' | 'identifierCheck' | 'identifierRepair'>;
  signal: AbortSignal;
  drafts?: DraftStore;
  /**
   * Output budget for the local summarizer, which fills whatever budget it gets: sized to
   * the planner's summary estimate so a local summary frees what the plan projected.
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
  /** the models' observed paces, which time the hedge (default: this process's) */
  paces?: PaceBook;
}

/** Paces observed by this process: every step of a worker learns from the calls before it. */
const PROCESS_PACES = new PaceBook();

/** Thrown to hand a step back to the queue until the provider's retry-after has passed. */
export class DeferStep extends Error {
  constructor(
    readonly delayMs: number,
    override readonly cause: LlmError,
  ) {
    super(`provider asked to retry after ${delayMs} ms`);
    this.name = 'DeferStep';
  }
}

export async function summarizeGuarded(input: GuardedSummaryInput): Promise<GuardedSummary> {
  const { selection, signal } = input;
  const summarizer: Summarizer | undefined = input.summarizers[selection.provider];
  const tally: Tally = { usage: ZERO_USAGE, calls: 0, cost: 0, latencyMs: 0 };
  const paces = input.paces ?? PROCESS_PACES;
  const record = (usage: LlmUsage, cost: number, latencyMs: number): void => {
    tally.usage = addUsage(tally.usage, usage);
    tally.cost += cost;
    tally.latencyMs += latencyMs;
  };
  const call = async (
    target: Summarizer,
    model: string,
    request: SummarizeRequest,
    options: Pick<SummarizeOptions, 'signal' | 'onAttempt'> = {},
  ) => {
    // `calls` counts provider calls (what is billed); the local summarizer is free
    if (target.provider !== 'local') tally.calls += 1;
    const sized =
      target.provider === 'local' && input.localMaxTokens !== undefined
        ? { ...request, maxOutputTokens: Math.min(request.maxOutputTokens, input.localMaxTokens) }
        : request;
    const price = (usage: LlmUsage) => (target.provider === 'local' ? 0 : costUsd(model, usage));
    try {
      const result = await target.summarize(sized, {
        model,
        signal: options.signal ?? signal,
        ...(options.onAttempt ? { onAttempt: options.onAttempt } : {}),
      });
      record(result.usage, price(result.usage), result.latencyMs);
      paces.observe(target.provider, model, result.latencyMs, result.usage.outputTokens);
      return result;
    } catch (error) {
      // an answer cut at its cap was produced and billed: it counts whether or not it is kept,
      // and it wrote at the model's pace (a model that fills every cap must still time the hedge)
      if (error instanceof LlmError && error.cut) {
        record(error.cut.usage, price(error.cut.usage), error.cut.latencyMs);
        paces.observe(target.provider, model, error.cut.latencyMs, error.cut.usage.outputTokens);
      }
      throw error;
    }
  };

  let text: string;
  let provider = selection.provider;
  let model = selection.model;
  let fallback: string | null = null;
  let completedSections: SectionName[] = [];
  try {
    if (!summarizer) throw new LlmError('bad_request', `summarizer provider ${selection.provider} is not configured`);
    const send: SendAnswer = async (request, options) => (await call(summarizer, model, request, options)).text;
    text = await firstAnswer(input, tally, async () => {
      if (summarizer.provider === 'local') return send(input.buildRequest(input.budget), {});
      const answer = await answerWithinCap({
        budget: input.budget,
        cap: outputCap(Math.max(input.budget, input.capTarget ?? 0), outputLimitFor(model)),
        buildRequest: input.buildRequest,
        pace: paces.get(summarizer.provider, model),
        signal,
        send,
      });
      const whole = await completeIfCut(input, answer);
      completedSections = whole.completed;
      return whole.text;
    });
    text = await repairIfAsked(input, text, (request) => call(summarizer, model, request));
  } catch (error) {
    if (input.deferRateLimits && isDeferrable(error, input.retryPolicy)) throw new DeferStep(error.retryAfterMs ?? 0, error);
    if (signal.aborted || input.policy.onLLMFailure === 'fail' || selection.provider === 'local') throw error;
    fallback = error instanceof LlmError ? error.code : 'LLM_FAILED';
    provider = 'local';
    model = LOCAL_MODEL;
    text = (await call(input.summarizers.local, model, input.buildRequest(input.budget))).text;
  }

  const stillMissing = input.policy.identifierCheck ? findMissingIdentifiers(input.identifiers, text) : [];
  return {
    summary: text,
    provider,
    model,
    usage: tally.usage,
    calls: tally.calls,
    costUsd: tally.cost,
    latencyMs: tally.latencyMs,
    // `found` says how many the answer holds; the rest are in the ledger or one recall away
    identifiers: { found: input.identifiers.length - stillMissing.length, total: input.identifiers.length },
    fallback,
    completedSections,
  };
}

/**
 * An answer cut before its last sections, made whole without another call: the local
 * extractor summarizes the same request (in-process, milliseconds) and lends the sections the
 * model never reached; what the model wrote is kept verbatim before them.
 */
async function completeIfCut(input: GuardedSummaryInput, answer: CappedAnswer): Promise<{ text: string; completed: SectionName[] }> {
  if (!answer.cut) return { text: answer.text, completed: [] };
  // a cut answer that reached every section needs nothing from the extractor
  if (sectionsCutOff(answer.text).length === 0) return completeCutAnswer(answer.text, '');
  const local = await input.summarizers.local.summarize(input.buildRequest(input.budget), { model: LOCAL_MODEL, signal: input.signal });
  return completeCutAnswer(answer.text, local.text);
}

/** `identifierRepair: call`: one small request for the identifiers the draft lacks; its answer is appended. */
async function repairIfAsked(
  input: GuardedSummaryInput,
  draft: string,
  send: (request: SummarizeRequest) => Promise<{ text: string }>,
): Promise<string> {
  if (!input.policy.identifierCheck || input.policy.identifierRepair !== 'call' || !input.buildRepairRequest) return draft;
  // as many as an appendix could list: the request and its answer stay bounded by the budget
  const missing = identifiersWithin(findMissingIdentifiers(input.identifiers, draft), repairListChars(input.budget));
  if (missing.length === 0) return draft;
  try {
    const addendum = (await send(input.buildRepairRequest(draft, missing))).text.trim();
    return addendum.length > 0 ? `${draft.trimEnd()}\n\n${addendum}` : draft;
  } catch (error) {
    // the draft is a valid summary; a failed repair must not discard it (the archive holds the gaps)
    if (input.signal.aborted) throw error;
    return draft;
  }
}

interface Tally {
  usage: LlmUsage;
  calls: number;
  cost: number;
  latencyMs: number;
}

/** The first answer: from the draft store when a previous attempt got that far, else a call (then saved). */
async function firstAnswer(input: GuardedSummaryInput, tally: Tally, call: () => Promise<string>): Promise<string> {
  const draft = await input.drafts?.load();
  if (draft) {
    tally.usage = addUsage(tally.usage, draft.usage);
    tally.calls += draft.calls;
    tally.cost += draft.costUsd;
    tally.latencyMs += draft.latencyMs;
    return draft.text;
  }
  const text = await call();
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
  return (
    error instanceof LlmError &&
    (error.kind === 'rate_limit' || error.kind === 'overloaded') &&
    error.retryAfterMs !== undefined &&
    !isRetryable(error, policy)
  );
}
