import type { Cluster, Redis } from 'ioredis';

import type { CountTokens } from '../compaction/types.js';
import type { Config } from '../config/env.js';
import { countTokens } from '../lib/count-tokens.js';
import { AppError } from '../lib/errors.js';
import { isProviderConfigured } from './configured-models.js';
import type { FetchLike } from './http-options.js';
import { createLocalSummarizer } from './local.js';
import type { NativeCompactors } from './native-port.js';
import type { ProviderName, Summarizer } from './port.js';
import { lazyCompactor, lazySummarizer, PROVIDER_ADAPTERS, type ProviderAdapters } from './provider-adapters.js';
import { createProviderLimiter, type ProviderLimiter } from './rate-limit.js';
import { withResilience } from './resilient.js';
import type { RetryPolicy } from './retry.js';

/**
 * Wires the adapters, the retry layer and the shared limiter into one object per provider,
 * so the worker asks `summarizers[selection.provider]` and never sees an SDK.
 */

export type SummarizerConfig = Pick<Config, 'anthropic' | 'openai' | 'llm'>;

export interface SummarizerDeps {
  /** network access for both SDKs; default the global fetch */
  fetch?: FetchLike | undefined;
  /** enables the provider-wide limiter shared by all processes */
  redis?: Redis | Cluster | undefined;
  /** Redis key prefix of the limiter; default `compactd` */
  keyPrefix?: string | undefined;
  /** a ready limiter (takes precedence over `redis`) */
  limiter?: ProviderLimiter | undefined;
  /** tokenizer of the local summarizer; default gpt-tokenizer */
  countTokens?: CountTokens | undefined;
  retryPolicy?: RetryPolicy | undefined;
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  random?: (() => number) | undefined;
  onRetry?: ((info: { provider: string; attempt: number; delayMs: number; error: unknown }) => void) | undefined;
  /** where the provider adapters are loaded from (on their first call); default the SDK adapters */
  adapters?: ProviderAdapters | undefined;
}

/** `local` always exists; a remote provider exists when it has an API key or a base URL. */
export interface Summarizers {
  local: Summarizer;
  anthropic?: Summarizer;
  openai?: Summarizer;
}

// OpenAI-compatible servers (Ollama, vLLM, llm-sim) need no key, but the SDKs insist on one.
const PLACEHOLDER_KEY = 'not-needed';

export function createSummarizers(config: SummarizerConfig, deps: SummarizerDeps = {}): Summarizers {
  const limiter =
    deps.limiter ??
    (deps.redis === undefined
      ? undefined
      : createProviderLimiter(deps.redis, {
          keyPrefix: deps.keyPrefix ?? 'compactd',
          concurrency: config.llm.concurrency,
          requestsPerMinute: config.llm.requestsPerMinute,
          ...(deps.retryPolicy === undefined ? {} : { maxPauseWaitMs: deps.retryPolicy.maxRetryAfterMs }),
        }));
  const resilient = (inner: Summarizer): Summarizer =>
    withResilience(inner, {
      maxAttempts: config.llm.maxAttempts,
      timeoutMs: config.llm.timeoutMs,
      limiter,
      policy: deps.retryPolicy,
      sleep: deps.sleep,
      random: deps.random,
      onRetry: deps.onRetry,
    });
  const http = { fetch: deps.fetch ?? globalThis.fetch, timeoutMs: config.llm.timeoutMs };

  const summarizers: Summarizers = {
    local: createLocalSummarizer({ countTokens: deps.countTokens ?? countTokens }),
  };
  const adapters = deps.adapters ?? PROVIDER_ADAPTERS;
  if (isProviderConfigured(config.anthropic)) {
    const options = { ...http, apiKey: config.anthropic.apiKey ?? PLACEHOLDER_KEY, baseURL: config.anthropic.baseUrl };
    summarizers.anthropic = resilient(
      lazySummarizer('anthropic', async () => (await adapters.anthropic()).createAnthropicSummarizer(options)),
    );
  }
  if (isProviderConfigured(config.openai)) {
    const options = { ...http, apiKey: config.openai.apiKey ?? PLACEHOLDER_KEY, baseURL: config.openai.baseUrl };
    summarizers.openai = resilient(lazySummarizer('openai', async () => (await adapters.openai()).createOpenAISummarizer(options)));
  }
  return summarizers;
}

/**
 * The providers' own compactions (strategy `native`) on the same endpoints and keys as the
 * summarizers. One attempt per call: a failed native compaction falls back to compactd's own
 * summary of the span (worker/native.ts), which has its own retries.
 */
export function createNativeCompactors(config: SummarizerConfig, deps: Pick<SummarizerDeps, 'fetch' | 'adapters'> = {}): NativeCompactors {
  const http = { fetch: deps.fetch ?? globalThis.fetch, timeoutMs: config.llm.timeoutMs };
  const adapters = deps.adapters ?? PROVIDER_ADAPTERS;
  const compactors: NativeCompactors = {};
  if (isProviderConfigured(config.anthropic)) {
    const options = { ...http, apiKey: config.anthropic.apiKey ?? PLACEHOLDER_KEY, baseURL: config.anthropic.baseUrl };
    compactors.anthropic = lazyCompactor('anthropic', async () => (await adapters.anthropic()).createAnthropicCompactor(options));
  }
  if (isProviderConfigured(config.openai)) {
    const options = { ...http, apiKey: config.openai.apiKey ?? PLACEHOLDER_KEY, baseURL: config.openai.baseUrl };
    compactors.openai = lazyCompactor('openai', async () => (await adapters.openai()).createOpenAICompactor(options));
  }
  return compactors;
}

/** Providers that can be selected (input to `selectSummarizerModel`). */
export function availableProviders(summarizers: Summarizers): ProviderName[] {
  const providers: ProviderName[] = [];
  if (summarizers.anthropic !== undefined) providers.push('anthropic');
  if (summarizers.openai !== undefined) providers.push('openai');
  providers.push('local');
  return providers;
}

/** The summarizer for a provider, or an error naming the missing configuration. */
export function summarizerFor(summarizers: Summarizers, provider: ProviderName): Summarizer {
  const summarizer = summarizers[provider];
  if (summarizer === undefined) {
    const variable = provider === 'anthropic' ? 'ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL' : 'OPENAI_API_KEY or OPENAI_BASE_URL';
    throw new AppError('LLM_PROVIDER_UNAVAILABLE', `summarizer provider ${provider} is not configured: set ${variable}`, { status: 400 });
  }
  return summarizer;
}
