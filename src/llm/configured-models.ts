import type { Config } from '../config/env.js';
import { findModel, LOCAL_MODEL, providerForVendor, resolveModelSpec } from './models.js';
import type { ProviderName } from './port.js';

/**
 * What "configured" means for summarizer models, shared by the worker (which builds the
 * adapters) and the API (which refuses, at request time, a model that could only end in
 * the local fallback). The fallback is for failures, not for configuration mistakes.
 */

type ProviderSettings = { apiKey: string | undefined; baseUrl: string | undefined };

/** A remote provider exists when it has an API key or a base URL (an OpenAI-compatible server may need no key). */
export function isProviderConfigured(settings: ProviderSettings): boolean {
  return settings.apiKey !== undefined || settings.baseUrl !== undefined;
}

export interface ConfiguredModels {
  /** selectable providers; `local` always */
  available: readonly ProviderName[];
  /** providers behind a custom base URL: a compatible server (vLLM, Ollama, a proxy) serves names the registry does not know */
  openEnded: readonly ProviderName[];
  /** COMPACTD_SUMMARIZER when set (bare unlisted models go to its provider when remote) */
  configured: { provider: ProviderName; model?: string | undefined } | undefined;
}

/**
 * The configured default summarizer, or undefined when COMPACTD_SUMMARIZER is unset. An
 * explicit value wins over the provider settings: `local` stays local even when a base URL
 * or key makes a remote provider available (that provider then serves only requests and
 * policies that name it). Unset, the selection falls to the first configured provider's
 * cheapest model, else local.
 */
export function configuredSummarizer(
  config: Pick<Config, 'summarizer'>,
): { provider: ProviderName; model?: string | undefined } | undefined {
  if (!config.summarizer.explicit) return undefined;
  const { provider, model } = config.summarizer;
  return model === undefined ? { provider } : { provider, model };
}

export function configuredModels(config: Pick<Config, 'anthropic' | 'openai' | 'summarizer'>): ConfiguredModels {
  const remote = (['anthropic', 'openai'] as const).filter((provider) => isProviderConfigured(config[provider]));
  return {
    available: [...remote, 'local'],
    openEnded: remote.filter((provider) => config[provider].baseUrl !== undefined),
    configured: configuredSummarizer(config),
  };
}

const CREDENTIALS: Record<Exclude<ProviderName, 'local'>, string> = {
  anthropic: 'ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL',
  openai: 'OPENAI_API_KEY or OPENAI_BASE_URL',
};

/**
 * Why a summarizer model spec (`provider:model`, a provider, or a bare model) cannot be
 * served here, or null when it can: its provider is not configured, or the provider talks to
 * the vendor's own API and the registry does not know the model (or knows it as another
 * vendor's).
 */
export function modelSpecProblem(spec: string, models: ConfiguredModels): string | null {
  const available = new Set(models.available);
  const chosen = resolveModelSpec(spec, models.configured?.provider, available);
  if (chosen === undefined) return 'must name a provider (anthropic, openai, local) or a model';
  const { provider, model } = chosen;
  if (provider === 'local') return model === LOCAL_MODEL ? null : `the local summarizer has one model, "${LOCAL_MODEL}" (got "${model}")`;
  if (!available.has(provider)) return `${model} needs the ${provider} provider, which is not configured (set ${CREDENTIALS[provider]})`;
  if (models.openEnded.includes(provider)) return null;
  const known = findModel(model);
  if (known === undefined)
    return `unknown model "${model}" for ${provider} (not in the model registry; a custom base URL accepts any name)`;
  if (providerForVendor(known.vendor) !== provider) return `${model} is a model of ${known.vendor}, not served by ${provider}`;
  if (known.vendor !== provider)
    return `${model} is a model of ${known.vendor}: ${provider} serves it only through a compatible endpoint (set the base URL)`;
  return null;
}
