import { AppError } from '../lib/errors.js';
import {
  CHEAPEST_SUMMARIZER,
  DEFAULT_CONTEXT_TOKENS,
  DEFAULT_OUTPUT_TOKENS,
  LISTED_OUTPUT_TOKENS,
  LOCAL_MODEL,
  type ModelInfo,
  MODELS,
  type ModelVendor,
  OUTPUT_LIMITS,
} from './model-data.js';
import type { LlmUsage, ProviderName } from './port.js';

export type { ModelInfo, ModelPrices, ModelVendor } from './model-data.js';
export { CHEAPEST_SUMMARIZER, DEFAULT_CONTEXT_TOKENS, LOCAL_MODEL, MODELS } from './model-data.js';

/** Longest ids first, so `gpt-4o-mini-2024-07-18` matches gpt-4o-mini, not gpt-4o. */
const BY_LENGTH = [...MODELS].sort((a, b) => b.id.length - a.id.length);
// Routers and clouds prefix ids: openai/gpt-4o (OpenRouter), anthropic.claude-… (Bedrock), models/gemini-… (Gemini API).
const VENDOR_PREFIX = /^(?:[a-z0-9-]+\/|(?:[a-z]{2}\.)?anthropic\.)/i;

/** The registry entry for a model name, tolerating date suffixes and vendor prefixes. */
export function findModel(model: string): ModelInfo | undefined {
  const name = model.trim().toLowerCase().replace(VENDOR_PREFIX, '');
  return BY_LENGTH.find((info) => {
    if (!name.startsWith(info.id)) return false;
    const next = name.charAt(info.id.length);
    // A boundary must follow, so `gpt-4` does not claim `gpt-4o`, and `o1` not `o1x`.
    return next === '' || next === '-' || next === '@' || next === ':';
  });
}

/** Context window of a model; unknown models get the 128k default (SPEC §5.1). */
export function contextLimitFor(model: string): number {
  return findModel(model)?.contextTokens ?? DEFAULT_CONTEXT_TOKENS;
}

/** The most output tokens a model accepts in `max_tokens`; unknown models get the common 4,096 floor. */
export function outputLimitFor(model: string): number {
  const known = findModel(model);
  if (known === undefined) return DEFAULT_OUTPUT_TOKENS;
  return OUTPUT_LIMITS[known.id] ?? LISTED_OUTPUT_TOKENS;
}

/**
 * Cost in USD of one call's usage at the model's list prices. Unknown models (and the
 * local summarizer) cost 0: the registry has no price to charge.
 */
export function costUsd(model: string, usage: LlmUsage): number {
  const prices = findModel(model)?.prices;
  if (prices === undefined) return 0;
  const micro =
    usage.inputTokens * prices.input +
    usage.outputTokens * prices.output +
    usage.cacheReadTokens * prices.cacheRead +
    usage.cacheWriteTokens * prices.cacheWrite;
  return micro / 1_000_000;
}

/** Which adapter serves a vendor's models: Gemini (and others) go through the OpenAI-compatible one. */
export function providerForVendor(vendor: ModelVendor): Exclude<ProviderName, 'local'> {
  return vendor === 'anthropic' ? 'anthropic' : 'openai';
}

/** The default summarizer model of a provider (SPEC §5.4: haiku, gpt-4o-mini…; `local` for local). */
export function cheapestModelFor(provider: ProviderName): string {
  return provider === 'local' ? LOCAL_MODEL : CHEAPEST_SUMMARIZER[provider];
}

/** `anthropic:claude-haiku-4-5`, `claude-haiku-4-5`, `openai`, `local`, or an explicit pair. */
export type ModelSpec = string | { provider?: ProviderName | undefined; model?: string | undefined };

export interface ModelSelectionInput {
  /** the compaction request's `model` */
  request?: ModelSpec | undefined;
  /** the conversation's (or tenant's) policy, already merged */
  policy?: ModelSpec | undefined;
  /** COMPACTD_SUMMARIZER */
  configured?: { provider: ProviderName; model?: string | undefined } | undefined;
  /** providers with credentials or a base URL; `local` is always available */
  availableProviders: readonly ProviderName[];
}

export interface ModelSelection {
  provider: ProviderName;
  model: string;
}

/**
 * Picks the summarizer model (SPEC §5.4): request > conversation/tenant policy >
 * configured default > the provider's cheapest model > the local summarizer when no
 * provider is configured. The first level that names something decides; naming a
 * provider that is not available is an error, not a silent fallback.
 */
export function selectSummarizerModel(input: ModelSelectionInput): ModelSelection {
  const available = new Set<ProviderName>([...input.availableProviders, 'local']);
  const configuredProvider = input.configured?.provider;
  for (const spec of [input.request, input.policy, input.configured]) {
    const chosen = resolveModelSpec(spec, configuredProvider, available);
    if (chosen === undefined) continue;
    if (!available.has(chosen.provider)) {
      throw new AppError('LLM_PROVIDER_UNAVAILABLE', `summarizer provider ${chosen.provider} is not configured (model ${chosen.model})`, {
        status: 400,
        field: 'model',
      });
    }
    return chosen;
  }
  const remote = (['anthropic', 'openai'] as const).find((provider) => available.has(provider));
  return remote === undefined ? { provider: 'local', model: LOCAL_MODEL } : { provider: remote, model: cheapestModelFor(remote) };
}

/** The provider and model a spec names (a bare model's provider inferred), or undefined when it names nothing. */
export function resolveModelSpec(
  spec: ModelSpec | undefined,
  configuredProvider: ProviderName | undefined,
  available: ReadonlySet<ProviderName>,
): ModelSelection | undefined {
  const parsed = typeof spec === 'string' ? parseModelSpec(spec) : spec;
  const model = parsed?.model?.trim() === '' ? undefined : parsed?.model?.trim();
  const provider = parsed?.provider ?? (model === undefined ? undefined : inferProvider(model, configuredProvider, available));
  if (provider === undefined) return undefined;
  return { provider, model: model ?? cheapestModelFor(provider) };
}

/** Splits `provider:model`; a bare provider name or a bare model is accepted too. */
export function parseModelSpec(spec: string): { provider?: ProviderName; model?: string } | undefined {
  const text = spec.trim();
  if (text === '') return undefined;
  if (text === 'anthropic' || text === 'openai' || text === 'local') return { provider: text };
  const colon = text.indexOf(':');
  const head = colon === -1 ? '' : text.slice(0, colon);
  if (head === 'anthropic' || head === 'openai' || head === 'local') {
    const model = text.slice(colon + 1).trim();
    return model === '' ? { provider: head } : { provider: head, model };
  }
  return { model: text };
}

function inferProvider(model: string, configuredProvider: ProviderName | undefined, available: ReadonlySet<ProviderName>): ProviderName {
  if (model === LOCAL_MODEL) return 'local';
  const known = findModel(model);
  if (known !== undefined) return providerForVendor(known.vendor);
  // An unlisted model (a local vLLM or Ollama model, a router alias) goes to the configured remote provider.
  if (configuredProvider !== undefined && configuredProvider !== 'local') return configuredProvider;
  return available.has('openai') ? 'openai' : available.has('anthropic') ? 'anthropic' : 'openai';
}
