/**
 * Model registry data: context windows and list prices (USD per million tokens) of the
 * models a summarizer or a session is likely to use. Ids are base names; `models.ts`
 * matches dated and vendor-prefixed variants (claude-haiku-4-5-20251001, openai/gpt-4o,
 * anthropic.claude-3-5-sonnet-20240620-v1:0, models/gemini-2.5-flash) to them.
 * Prices are the vendors' published standard-tier prices; cache write is the 5-minute
 * write price for Claude, and OpenAI/Gemini bill no separate cache write (0).
 */

export type ModelVendor = 'anthropic' | 'openai' | 'google';

export interface ModelPrices {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface ModelInfo {
  id: string;
  vendor: ModelVendor;
  contextTokens: number;
  prices: ModelPrices;
  /**
   * The shortest prompt prefix the provider caches: Anthropic caches from a `cache_control`
   * breakpoint whose prefix is at least this long (1,024 tokens for Sonnet and Opus, 2,048 for
   * Haiku); OpenAI caches prompts of 1,024 tokens and up by itself.
   */
  minCacheTokens: number;
}

const claude = (id: string, input: number, output: number, contextTokens = 200_000): ModelInfo => ({
  id,
  vendor: 'anthropic',
  contextTokens,
  minCacheTokens: id.includes('haiku') ? 2_048 : 1_024,
  prices: { input, output, cacheRead: input * 0.1, cacheWrite: input * 1.25 },
});

const openai = (id: string, contextTokens: number, input: number, output: number, cacheRead: number): ModelInfo => ({
  id,
  vendor: 'openai',
  contextTokens,
  minCacheTokens: 1_024,
  prices: { input, output, cacheRead, cacheWrite: 0 },
});

const gemini = (id: string, contextTokens: number, input: number, output: number, cacheRead: number): ModelInfo => ({
  id,
  vendor: 'google',
  contextTokens,
  // Gemini's implicit caching starts at 1,024 tokens (2.5 Flash) to 4,096 (Pro); the lower bound
  minCacheTokens: 1_024,
  prices: { input, output, cacheRead, cacheWrite: 0 },
});

export const MODELS: readonly ModelInfo[] = [
  claude('claude-opus-4-5', 5, 25),
  claude('claude-opus-4-1', 15, 75),
  claude('claude-opus-4', 15, 75),
  claude('claude-sonnet-4-5', 3, 15),
  claude('claude-sonnet-4', 3, 15),
  claude('claude-haiku-4-5', 1, 5),
  claude('claude-3-7-sonnet', 3, 15),
  claude('claude-3-5-sonnet', 3, 15),
  claude('claude-3-5-haiku', 0.8, 4),
  claude('claude-3-opus', 15, 75),
  claude('claude-3-sonnet', 3, 15),
  claude('claude-3-haiku', 0.25, 1.25),

  openai('gpt-4o', 128_000, 2.5, 10, 1.25),
  openai('gpt-4o-mini', 128_000, 0.15, 0.6, 0.075),
  openai('gpt-4.1', 1_047_576, 2, 8, 0.5),
  openai('gpt-4.1-mini', 1_047_576, 0.4, 1.6, 0.1),
  openai('gpt-4.1-nano', 1_047_576, 0.1, 0.4, 0.025),
  openai('gpt-4-turbo', 128_000, 10, 30, 10),
  openai('gpt-4', 8_192, 30, 60, 30),
  openai('gpt-3.5-turbo', 16_385, 0.5, 1.5, 0.5),
  openai('gpt-5', 400_000, 1.25, 10, 0.125),
  openai('gpt-5-mini', 400_000, 0.25, 2, 0.025),
  openai('gpt-5-nano', 400_000, 0.05, 0.4, 0.005),
  openai('o1', 200_000, 15, 60, 7.5),
  openai('o1-mini', 128_000, 1.1, 4.4, 0.55),
  openai('o3', 200_000, 2, 8, 0.5),
  openai('o3-mini', 200_000, 1.1, 4.4, 0.55),
  openai('o4-mini', 200_000, 1.1, 4.4, 0.275),

  gemini('gemini-2.5-pro', 1_048_576, 1.25, 10, 0.31),
  gemini('gemini-2.5-flash', 1_048_576, 0.3, 2.5, 0.075),
  gemini('gemini-2.5-flash-lite', 1_048_576, 0.1, 0.4, 0.025),
  gemini('gemini-2.0-flash', 1_048_576, 0.1, 0.4, 0.025),
  gemini('gemini-2.0-flash-lite', 1_048_576, 0.075, 0.3, 0.01875),
  gemini('gemini-1.5-pro', 2_097_152, 1.25, 5, 0.3125),
  gemini('gemini-1.5-flash', 1_048_576, 0.075, 0.3, 0.01875),
];

/**
 * Output limits (`max_tokens` the API accepts) of the listed models whose limit is below
 * `LISTED_OUTPUT_TOKENS`: a summary's runaway cap stays within them.
 */
export const OUTPUT_LIMITS: Readonly<Record<string, number>> = {
  'claude-3-5-sonnet': 8_192,
  'claude-3-5-haiku': 8_192,
  'claude-3-opus': 4_096,
  'claude-3-sonnet': 4_096,
  'claude-3-haiku': 4_096,
  'gpt-4o': 16_384,
  'gpt-4o-mini': 16_384,
  'gpt-4-turbo': 4_096,
  'gpt-4': 8_192,
  'gpt-3.5-turbo': 4_096,
  'gemini-1.5-pro': 8_192,
  'gemini-1.5-flash': 8_192,
  'gemini-2.0-flash': 8_192,
  'gemini-2.0-flash-lite': 8_192,
};

/** Output limit of the other listed models: all of them accept at least this. */
export const LISTED_OUTPUT_TOKENS = 32_000;

/** Output limit assumed for a model the registry does not know (a local server's model): the common floor. */
export const DEFAULT_OUTPUT_TOKENS = 4_096;

/** Context window assumed for a model the registry does not know (SPEC §5.1). */
export const DEFAULT_CONTEXT_TOKENS = 128_000;

/**
 * The summarizer each vendor's API defaults to when none is named: cheap, fast and good
 * at faithful extraction. Gemini is reached through the OpenAI-compatible adapter.
 */
export const CHEAPEST_SUMMARIZER: Readonly<Record<ModelVendor, string>> = {
  anthropic: 'claude-haiku-4-5',
  openai: 'gpt-4o-mini',
  google: 'gemini-2.5-flash',
};

/** The model name the local (offline, extractive) summarizer reports. */
export const LOCAL_MODEL = 'local';
