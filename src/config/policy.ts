import { z } from 'zod';

import { AppError } from '../lib/errors.js';
import { safeText } from '../lib/text-safety.js';

/**
 * Compaction policy and importance-scoring weights (SPEC §5.1–5.3, §5.6, §5.6a).
 * Every knob has its default here; tenants, conversations and single requests override
 * any subset (`PolicyOverrideSchema`), merged in that order by the pure `mergePolicy`.
 */

/**
 * Every number is bounded: a policy's values reach integer columns (a chunk's output budget),
 * sums and products (head + tail tokens, idle seconds × 1000 as a queue delay), so an
 * unbounded one overflows a column or a timer far from the request that set it.
 * Tokens: as many as the largest context window a conversation may declare.
 */
export const MAX_POLICY_TOKENS = 100_000_000;
/** Message counts: far beyond any conversation (and every sum of two stays an int4). */
export const MAX_POLICY_MESSAGES = 10_000_000;
/** Idle wait: 30 days, a queue delay that timers and Redis scores hold exactly. */
export const MAX_IDLE_SECONDS = 30 * 24 * 3600;

const ratio = z.number().gt(0).lt(1);
const count = z.number().int().min(0).max(MAX_POLICY_MESSAGES);
const tokens = (min: number) => z.number().int().min(min).max(MAX_POLICY_TOKENS);
const weight = z.number().min(0).max(1000);
/** Strings of a policy end up in prompts and jsonb: bounded, no NUL, no unpaired surrogates. */
const text = (min: number, max: number) => safeText({ min, max });

export const DEFAULT_KEYWORDS: readonly string[] = [
  'error',
  'fail',
  'must',
  'never',
  'always',
  'decided',
  'requirement',
  'todo',
  'fixme',
  'important',
];

export const ScoringSchema = z.strictObject({
  roleWeights: z
    .strictObject({
      system: weight.default(10),
      user: weight.default(5),
      assistant: weight.default(3),
      tool: weight.default(2),
    })
    .prefault({}),
  /** newer units score higher: `weight · 0.5^(age / halfLifeMessages)`, age counted in messages */
  recency: z
    .strictObject({
      weight: weight.default(4),
      halfLifeMessages: z.number().gt(0).max(1_000_000).default(24),
    })
    .prefault({}),
  questionBonus: weight.default(2),
  toolCallBonus: weight.default(4),
  keywordBonus: weight.default(1.5),
  /** matched case-insensitively at a word start ("fail" matches "failed"); each counts once per unit */
  keywords: z
    .array(text(1, 64))
    .max(200)
    .default([...DEFAULT_KEYWORDS]),
  lengthBonusPer100Chars: weight.default(1),
  lengthBonusCap: weight.default(3),
});
export type Scoring = z.infer<typeof ScoringSchema>;

const PolicyObjectSchema = z.strictObject({
  /** auto-compaction on threshold; manual and tool compactions work either way */
  auto: z.boolean().default(true),
  /*
   * The defaults are priced (SPEC §5.10, BENCH.md "a session's cost"): every token left in the
   * active history is read again by each later agent call, so after a compaction little more
   * than the recent tail and the clip-archive stays (targetRatio), and compacting at 0.7 of the
   * window leaves the background job room to finish before the agent reaches the window.
   */
  triggerRatio: ratio.default(0.7),
  warnRatio: ratio.default(0.6),
  targetRatio: ratio.default(0.1),
  minMessages: count.default(30),
  cooldownMessages: count.default(20),
  keepRecent: count.default(12),
  /** when set, the protected tail is sized in tokens instead of `keepRecent` messages */
  keepRecentTokens: tokens(1).optional(),
  /** additionally keep user messages verbatim, newest first, up to this many tokens */
  keepUserTokens: tokens(0).default(0),
  /** the newest images the user sent stay verbatim (SPEC §5.6c): the agent keeps seeing the screenshot it is asked about */
  keepImages: count.default(1),
  chunkTokens: tokens(500).default(12_000),
  maxLiveBatches: z.number().int().min(2).max(MAX_POLICY_MESSAGES).default(6),
  minProgressRatio: z.number().min(0).lt(1).default(0.1),
  strategy: z.enum(['auto', 'summarize', 'mask', 'reset', 'native']).default('auto'),
  /**
   * `auto` asks the agent's provider to compact (strategy `native`) only when one call is
   * estimated to finish within this budget (SPEC §5.10); longer spans get parallel chunks.
   */
  nativeLatencyBudgetMs: z.number().int().min(0).max(3_600_000).default(60_000),
  onLLMFailure: z.enum(['fallback', 'fail']).default('fallback'),
  clipArchiveRole: z.enum(['system', 'user']).default('system'),
  schedule: z.enum(['eager', 'idle']).default('eager'),
  idleSeconds: z.number().int().min(1).max(MAX_IDLE_SECONDS).default(120),
  idleRatio: ratio.default(0.5),
  summaryMaxTokens: tokens(64).default(2000),
  /**
   * Output budget of a chunk call per source token (SPEC §5.4), clamped to
   * [summaryMinTokens, summaryMaxTokens]: a call writes what its excerpt is worth, and output
   * tokens are what a call's latency is made of.
   */
  summaryRatio: z.number().gt(0).max(1).default(0.07),
  /** the floor of a budget (room for the seven sections); `summaryMaxTokens` wins when lower */
  summaryMinTokens: tokens(64).default(320),
  /** output budget of a consolidation per token of the summaries it absorbs */
  consolidationRatio: z.number().gt(0).max(1).default(0.6),
  /** expected summary size relative to its chunk, used only to project tokens after compaction */
  summaryEstimateRatio: z.number().gt(0).max(1).default(0.25),
  /** Tier 1: tool outputs above `maxTokens` keep `headTokens` + `tailTokens` around a marker */
  tier1: z
    .strictObject({
      maxTokens: tokens(1).default(3000),
      headTokens: tokens(1).default(1000),
      tailTokens: tokens(1).default(500),
    })
    .prefault({}),
  /** Tier 2: tool outputs of at least `minTokens` are masked (smaller ones cost less than the placeholder) */
  tier2: z.strictObject({ minTokens: tokens(1).default(100) }).prefault({}),
  /** the agent's `compact` tool is not eligible below this many active tokens */
  toolMinTokens: tokens(0).default(10_000),
  /**
   * SPEC §5.6a identifier check over every identifier of the source; `maxIdentifiers` caps how
   * many are named in the request (the output budget caps it too). What an answer still lacks
   * is counted (`identifiers` in the job result), not appended: the state ledger holds the
   * span's files, commands and errors exactly and the archive holds every name (recall).
   * `call` asks for the gaps in one small repair request whose answer is appended, in rank
   * order while it fits about one output budget of characters. `append` is the former name of
   * `none`, accepted for stored policies.
   */
  identifierCheck: z.boolean().default(true),
  maxIdentifiers: z.number().int().min(1).max(500).default(60),
  identifierRepair: z.enum(['none', 'append', 'call']).default('none'),
  /**
   * SPEC §5.7: the whole clip-archive's token budget (state of the work, summaries, framing),
   * sized like the summaries the best agent tools write (3–4k tokens for a 100k-token span).
   * Chunk answers share what the ledger leaves; consolidation enforces it.
   */
  clipArchiveMaxTokens: tokens(500).default(3500),
  /** SPEC §5.6b: the rendered state ledger's share of the clip-archive (newest and open items kept first) */
  ledgerMaxTokens: tokens(100).default(1400),
  /** SPEC §5.6b: how many of the last distinct commands the state shows, each with how it ended */
  ledgerRecentCommands: z.number().int().min(0).max(50).default(5),
  systemPrompt: text(1, 20_000).optional(),
  /**
   * The operator's domain instructions (what to keep), added to every summarizer request in a
   * fenced section of its system prompt (compaction/summarize/operator-instructions.ts). Short,
   * since every chunk call pays for them; blank clears a tenant's at the conversation level.
   */
  summaryInstructions: text(0, 2_000).optional(),
  /** summarizer model, `provider:model` or a bare model; the API refuses one that is not configured */
  model: text(1, 200).optional(),
  scoring: ScoringSchema.prefault({}),
});

/**
 * Cross-field rules. A violated rule is reported on every field it involves, so the caller
 * can name the one the user actually set (the API keeps those; see api/policy-check.ts).
 */
export const PolicySchema = PolicyObjectSchema.superRefine((policy, ctx) => {
  const issue = (paths: string[][], message: string) => {
    for (const path of paths) ctx.addIssue({ code: 'custom', path, message });
  };
  if (policy.warnRatio > policy.triggerRatio) {
    issue([['warnRatio'], ['triggerRatio']], `warnRatio (${policy.warnRatio}) must not exceed triggerRatio (${policy.triggerRatio})`);
  }
  if (policy.targetRatio >= policy.triggerRatio) {
    issue([['targetRatio'], ['triggerRatio']], `targetRatio (${policy.targetRatio}) must be below triggerRatio (${policy.triggerRatio})`);
  }
  const { maxTokens, headTokens, tailTokens } = policy.tier1;
  if (headTokens + tailTokens >= maxTokens) {
    issue(
      [
        ['tier1', 'maxTokens'],
        ['tier1', 'headTokens'],
        ['tier1', 'tailTokens'],
      ],
      `tier1 headTokens + tailTokens (${headTokens} + ${tailTokens}) must be below maxTokens (${maxTokens})`,
    );
  }
  if (policy.summaryMaxTokens >= policy.chunkTokens) {
    issue(
      [['summaryMaxTokens'], ['chunkTokens']],
      `summaryMaxTokens (${policy.summaryMaxTokens}) must be below chunkTokens (${policy.chunkTokens})`,
    );
  }
  if (policy.ledgerMaxTokens >= policy.clipArchiveMaxTokens) {
    issue(
      [['ledgerMaxTokens'], ['clipArchiveMaxTokens']],
      `ledgerMaxTokens (${policy.ledgerMaxTokens}) must be below clipArchiveMaxTokens (${policy.clipArchiveMaxTokens})`,
    );
  }
});
export type Policy = z.infer<typeof PolicySchema>;

type Leaf = string | number | boolean | readonly unknown[] | undefined;
/** Every field optional at every depth; arrays are replaced whole, never merged. */
export type DeepPartial<T> = { [K in keyof T]?: T[K] extends Leaf ? T[K] : DeepPartial<T[K]> };
export type PolicyOverride = DeepPartial<Policy>;

/** The same fields without defaults, every one optional, unknown keys rejected (the API answers 400). */
function toOverrideSchema(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodDefault || schema instanceof z.ZodPrefault || schema instanceof z.ZodOptional) {
    return toOverrideSchema(schema.def.innerType as z.ZodType);
  }
  if (schema instanceof z.ZodObject) {
    const shape: Record<string, z.ZodType> = {};
    for (const [key, field] of Object.entries(schema.shape)) {
      shape[key] = toOverrideSchema(field).optional();
    }
    return z.strictObject(shape);
  }
  return schema;
}

export const PolicyOverrideSchema = toOverrideSchema(PolicyObjectSchema) as z.ZodType<PolicyOverride>;

export const DEFAULT_POLICY: Policy = PolicySchema.parse({});

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepMerge(base: Record<string, unknown>, override: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === undefined) continue;
    const current = out[key];
    out[key] = isPlainObject(value) && isPlainObject(current) ? deepMerge(current, value) : value;
  }
  return out;
}

/**
 * Merges overrides in order (tenant → conversation → request; later wins) over the defaults.
 * Throws `AppError('INVALID_POLICY', 400)` when a field or a cross-field rule (e.g. target
 * below trigger) is violated by the combination.
 */
export function mergePolicy(...overrides: ReadonlyArray<PolicyOverride | null | undefined>): Policy {
  let merged: Record<string, unknown> = {};
  for (const override of overrides) {
    if (override) merged = deepMerge(merged, override);
  }
  const parsed = PolicySchema.safeParse(merged);
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.map((issue) => ({ field: issue.path.join('.'), message: issue.message }));
  const summary = details.map((d) => `${d.field}: ${d.message}`).join('; ');
  return invalidPolicy(summary, details);
}

function invalidPolicy(summary: string, details: Array<{ field: string; message: string }>): never {
  throw new AppError('INVALID_POLICY', `invalid compaction policy: ${summary}`, { status: 400, details });
}
