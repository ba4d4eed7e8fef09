import type { SummarizeRequest } from '../compaction/types.js';
import { AppError } from '../lib/errors.js';

/**
 * The summarizer port (SPEC §5.4, §5.6a). The worker talks to every provider through this
 * interface; adapters (anthropic, openai, local) translate it to their wire format and turn
 * every failure into one `LlmError`. No I/O here.
 */

export type ProviderName = 'anthropic' | 'openai' | 'local';
export const PROVIDERS: readonly ProviderName[] = ['anthropic', 'openai', 'local'];

/** `length` means the provider stopped at the output budget; adapters report it as `invalid_output`. */
export type StopReason = 'end' | 'length' | 'other';

/**
 * Token usage as the provider reports it. `inputTokens` counts the input tokens that were
 * neither read from nor written to the prompt cache (Anthropic's convention; the OpenAI
 * adapter subtracts cached tokens from `prompt_tokens`), so the four numbers add up to the
 * whole input + output and each is billed at its own price.
 */
export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface SummarizeResult {
  text: string;
  stopReason: StopReason;
  /** the model that answered, as the provider names it */
  model: string;
  usage: LlmUsage;
  /** wall time of the provider call that produced this result (earlier failed attempts and waits excluded) */
  latencyMs: number;
}

export interface SummarizeOptions {
  model: string;
  /** aborting cancels the in-flight HTTP request (and any retry wait) */
  signal?: AbortSignal;
  /** per-attempt timeout; adapters fall back to their configured default */
  timeoutMs?: number;
  /**
   * Told when an attempt reaches the provider (after the limiter and any backoff) and when
   * it ends: a hedge's clock runs only while a request is really in flight.
   */
  onAttempt?: (phase: 'start' | 'end') => void;
}

export interface Summarizer {
  readonly provider: ProviderName;
  /**
   * Summarizes one structured request. Resolves only with a usable summary: empty, refused,
   * error-like or truncated output rejects with `LlmError` kind `invalid_output`.
   */
  summarize(request: SummarizeRequest, options: SummarizeOptions): Promise<SummarizeResult>;
}

export type LlmErrorKind =
  'rate_limit' | 'overloaded' | 'server' | 'timeout' | 'invalid_output' | 'auth' | 'bad_request' | 'quota' | 'cancelled';

const CODES: Record<LlmErrorKind, string> = {
  rate_limit: 'LLM_RATE_LIMITED',
  overloaded: 'LLM_OVERLOADED',
  server: 'LLM_SERVER_ERROR',
  timeout: 'LLM_TIMEOUT',
  invalid_output: 'LLM_INVALID_OUTPUT',
  auth: 'LLM_AUTH_FAILED',
  bad_request: 'LLM_BAD_REQUEST',
  quota: 'LLM_QUOTA_EXCEEDED',
  cancelled: 'LLM_CANCELLED',
};

/** Transient kinds: a later attempt of the same request can succeed. */
const RETRYABLE_BY_DEFAULT: ReadonlySet<LlmErrorKind> = new Set(['rate_limit', 'overloaded', 'server', 'timeout']);

export interface LlmErrorOptions {
  provider?: ProviderName;
  /** overrides the kind's default (e.g. an empty answer is worth one more try, a truncated one is not) */
  retryable?: boolean;
  retryAfterMs?: number;
  /** HTTP status the provider answered with, when there was one */
  providerStatus?: number;
  /** a more specific stable code than the kind's (e.g. LLM_CONTEXT_TOO_LONG) */
  code?: string;
  cause?: unknown;
  /** an answer cut at its output limit: what it wrote and what it cost (the caller may keep it) */
  cut?: CutAnswer;
}

/** The text and usage of an answer the provider stopped at `max_tokens`. */
export interface CutAnswer {
  text: string;
  usage: LlmUsage;
  latencyMs: number;
}

/** The one error every summarizer rejects with. `status` is 502/504 (a gateway's view) or 499. */
export class LlmError extends AppError {
  readonly kind: LlmErrorKind;
  readonly provider: ProviderName | undefined;
  readonly providerStatus: number | undefined;
  readonly cut: CutAnswer | undefined;

  constructor(kind: LlmErrorKind, message: string, options: LlmErrorOptions = {}) {
    super(options.code ?? CODES[kind], message, {
      status: kind === 'cancelled' ? 499 : kind === 'timeout' ? 504 : 502,
      retryable: options.retryable ?? RETRYABLE_BY_DEFAULT.has(kind),
      ...(options.retryAfterMs === undefined ? {} : { retryAfterMs: options.retryAfterMs }),
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
    this.name = 'LlmError';
    this.kind = kind;
    this.provider = options.provider;
    this.providerStatus = options.providerStatus;
    this.cut = options.cut;
  }
}

export function isLlmError(error: unknown): error is LlmError {
  return error instanceof LlmError;
}

/** Sums usages (a summary that took several attempts, or a job's calls). */
export function addUsage(a: LlmUsage, b: LlmUsage): LlmUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
  };
}

export const ZERO_USAGE: LlmUsage = Object.freeze({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
