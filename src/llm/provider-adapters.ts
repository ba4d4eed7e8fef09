import type { AnthropicSummarizerOptions } from './anthropic.js';
import type { HttpAdapterOptions } from './http-options.js';
import type { NativeCompactor } from './native-port.js';
import type { OpenAISummarizerOptions } from './openai.js';
import type { Summarizer } from './port.js';

/**
 * The provider adapters, each module (and its SDK) loaded on the first call that needs it. An
 * SDK is a large part of a process's memory (resident after import: @anthropic-ai/sdk ~23 MB,
 * openai ~14 MB, against ~120 MB for an idle worker), and a worker configured for both
 * providers may only ever call one of them; a process that only serves the API never calls
 * either.
 */
export interface ProviderAdapters {
  anthropic(): Promise<{
    createAnthropicSummarizer(options: AnthropicSummarizerOptions): Summarizer;
    createAnthropicCompactor(options: HttpAdapterOptions): NativeCompactor;
  }>;
  openai(): Promise<{
    createOpenAISummarizer(options: OpenAISummarizerOptions): Summarizer;
    createOpenAICompactor(options: HttpAdapterOptions): NativeCompactor;
  }>;
}

export const PROVIDER_ADAPTERS: ProviderAdapters = {
  anthropic: async () => {
    const [summarizer, compactor] = await Promise.all([import('./anthropic.js'), import('./native-anthropic.js')]);
    return {
      createAnthropicSummarizer: summarizer.createAnthropicSummarizer,
      createAnthropicCompactor: compactor.createAnthropicCompactor,
    };
  },
  openai: async () => {
    const [summarizer, compactor] = await Promise.all([import('./openai.js'), import('./native-openai.js')]);
    return { createOpenAISummarizer: summarizer.createOpenAISummarizer, createOpenAICompactor: compactor.createOpenAICompactor };
  },
};

/**
 * Calls `create` once, on the first use of what it makes; a failed load is tried again on the
 * next use rather than remembered.
 */
export function onFirstUse<T>(create: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= create().catch((error: unknown) => {
      made = undefined;
      throw error;
    });
    return made;
  };
}

/** A summarizer whose adapter is made on its first call. */
export function lazySummarizer(provider: Summarizer['provider'], create: () => Promise<Summarizer>): Summarizer {
  const adapter = onFirstUse(create);
  return { provider, summarize: async (request, options) => (await adapter()).summarize(request, options) };
}

/** A native compactor whose adapter is made on its first call. */
export function lazyCompactor(provider: NativeCompactor['provider'], create: () => Promise<NativeCompactor>): NativeCompactor {
  const adapter = onFirstUse(create);
  return { provider, compact: async (request, options) => (await adapter()).compact(request, options) };
}
