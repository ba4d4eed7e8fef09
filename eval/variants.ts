import { countTokens } from '../src/lib/count-tokens.js';
import type { EvalCase } from './corpus.js';

/**
 * The compactions the eval runs on each case. `local` always runs (offline, deterministic);
 * a provider runs when one is configured in the environment; llm-sim, when asked for, is a
 * loopback simulator that echoes identifiers and drops a seeded share of them: it shows
 * what the gate does for a lossy summarizer, and says nothing about any real model.
 */

export type Engine = 'local' | 'provider' | 'llm-sim';

export interface Variant {
  /** conversation-id safe */
  key: string;
  label: string;
  strategy: 'reset' | 'auto' | 'summarize';
  engine: Engine;
  /** the compaction request's `model` */
  model: string;
  /** conversation policy overrides */
  policy: Record<string, unknown>;
}

/** Identifiers the simulator drops from its first answer. */
export const SIM_LOSS_RATE = 0.25;

export interface ProviderChoice {
  /** the request's model spec, e.g. `anthropic` (its cheapest model) or `openai:gpt-4o-mini` */
  model: string;
  /** which variables configured it, for the report (never their values) */
  configuredBy: string[];
}

const PROVIDER_VARIABLES = ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'OPENAI_API_KEY', 'OPENAI_BASE_URL'] as const;

/** The provider the environment configures, if any: COMPACTD_EVAL_MODEL, else COMPACTD_SUMMARIZER, else the first configured. */
export function providerFromEnv(env: Record<string, string | undefined>): ProviderChoice | null {
  const configuredBy = PROVIDER_VARIABLES.filter((name) => (env[name] ?? '') !== '');
  if (configuredBy.length === 0) return null;
  const anthropic = configuredBy.some((name) => name.startsWith('ANTHROPIC'));
  const summarizer = env['COMPACTD_SUMMARIZER'];
  const model = env['COMPACTD_EVAL_MODEL'] ?? (summarizer && summarizer !== 'local' ? summarizer : anthropic ? 'anthropic' : 'openai');
  return { model, configuredBy: [...configuredBy] };
}

function variant(
  strategy: Variant['strategy'],
  engine: Engine,
  model: string,
  label: string,
  policy: Record<string, unknown> = {},
  suffix = '',
): Variant {
  return { key: `${strategy}-${engine}${suffix}`, label, strategy, engine, model, policy };
}

/**
 * Policy that sizes a reset's clip-archive like the peer's summary: two live batches of at
 * most half its tokens each (the local summarizer fills the budget it gets).
 */
export function peerSizedPolicy(peerSummary: string): Record<string, unknown> {
  return { maxLiveBatches: 2, summaryMaxTokens: Math.max(256, Math.floor(countTokens(peerSummary) / 2)) };
}

/**
 * Today's policy knobs set for retention: the gate checks up to 500 identifiers per chunk
 * (the schema's maximum; default 60) and batches are never re-summarized (re-summary is
 * where most identifiers are lost): what configuration alone achieves, at a size cost.
 */
export const WIDE_GATE_POLICY: Record<string, unknown> = { maxIdentifiers: 500, maxLiveBatches: 64 };

export interface VariantOptions {
  quick: boolean;
  provider: ProviderChoice | null;
  sim: boolean;
}

/** The variants of one case, in report order. */
export function variantsFor(c: EvalCase, options: VariantOptions): Variant[] {
  const out: Variant[] = [
    variant('reset', 'local', 'local', 'reset · local summarizer'),
    variant('auto', 'local', 'local', 'auto (default target) · local summarizer'),
  ];
  if (!options.quick) out.push(variant('summarize', 'local', 'local', 'summarize (keeps the recent tail) · local summarizer'));
  if (!options.quick) {
    out.push(
      variant(
        'reset',
        'local',
        'local',
        'reset, gate widened by policy (maxIdentifiers 500, maxLiveBatches 64) · local summarizer',
        WIDE_GATE_POLICY,
        '-wide-gate',
      ),
    );
  }
  if (c.peer && !options.quick) {
    out.push(
      variant(
        'reset',
        'local',
        'local',
        `reset, sized like ${c.peer.name}'s summary · local summarizer`,
        peerSizedPolicy(c.peer.summary),
        '-peer-sized',
      ),
    );
  }
  if (options.provider) {
    const model = options.provider.model;
    out.push(
      variant('reset', 'provider', model, `reset · ${model}`),
      variant('auto', 'provider', model, `auto (default target) · ${model}`),
    );
  }
  if (options.sim && c.collection === 'claude-code') {
    out.push(
      variant(
        'reset',
        'llm-sim',
        'openai:gpt-4o-mini',
        `reset · llm-sim (simulator, not a model; drops ${SIM_LOSS_RATE * 100}% of identifiers)`,
      ),
    );
  }
  return out;
}
