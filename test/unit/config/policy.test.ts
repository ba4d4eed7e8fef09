import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import {
  DEFAULT_KEYWORDS,
  DEFAULT_POLICY,
  mergePolicy,
  PolicyOverrideSchema,
  PolicySchema,
  ScoringSchema,
} from '../../../src/config/policy.js';
import { AppError } from '../../../src/lib/errors.js';

describe('PolicySchema defaults (SPEC §5.1–5.3, §5.6)', () => {
  it.each([
    ['triggerRatio', 0.7],
    ['warnRatio', 0.6],
    ['targetRatio', 0.1],
    ['minMessages', 30],
    ['cooldownMessages', 20],
    ['keepRecent', 12],
    ['keepUserTokens', 0],
    ['chunkTokens', 12_000],
    ['maxLiveBatches', 6],
    ['minProgressRatio', 0.1],
    ['strategy', 'auto'],
    ['onLLMFailure', 'fallback'],
    ['clipArchiveRole', 'system'],
    ['schedule', 'eager'],
  ] as const)('%s defaults to %s', (key, value) => {
    expect(DEFAULT_POLICY[key]).toBe(value);
  });

  it('leaves optional fields unset', () => {
    expect(DEFAULT_POLICY.keepRecentTokens).toBeUndefined();
    expect(DEFAULT_POLICY.systemPrompt).toBeUndefined();
    expect(DEFAULT_POLICY.model).toBeUndefined();
  });

  it('has the scoring weights of SPEC §5.3', () => {
    expect(ScoringSchema.parse({})).toEqual({
      roleWeights: { system: 10, user: 5, assistant: 3, tool: 2 },
      recency: { weight: 4, halfLifeMessages: 24 },
      questionBonus: 2,
      toolCallBonus: 4,
      keywordBonus: 1.5,
      keywords: [...DEFAULT_KEYWORDS],
      lengthBonusPer100Chars: 1,
      lengthBonusCap: 3,
    });
  });

  it.each([
    ['warn above trigger', { warnRatio: 0.9 }, 'warnRatio'],
    ['target at trigger', { targetRatio: 0.7 }, 'targetRatio'],
    ['tier1 head+tail over max', { tier1: { maxTokens: 1000, headTokens: 800, tailTokens: 300 } }, 'tier1.maxTokens'],
    ['summary budget over chunk', { chunkTokens: 1000, summaryMaxTokens: 1000 }, 'summaryMaxTokens'],
  ])('rejects %s', (_name, input, field) => {
    const result = PolicySchema.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join('.'))).toContain(field);
  });
});

describe('PolicyOverrideSchema', () => {
  it('accepts any subset without filling defaults', () => {
    expect(PolicyOverrideSchema.parse({ scoring: { roleWeights: { user: 7 } } })).toEqual({
      scoring: { roleWeights: { user: 7 } },
    });
    expect(PolicyOverrideSchema.parse({})).toEqual({});
  });

  it.each([
    ['unknown top-level key', { triggerRatioo: 0.5 }],
    ['unknown nested key', { scoring: { roleWeights: { robot: 1 } } }],
    ['wrong type', { keepRecent: 'twelve' }],
    ['out of range', { triggerRatio: 1.5 }],
    ['unknown strategy', { strategy: 'delete-everything' }],
  ])('rejects %s', (_name, input) => {
    expect(PolicyOverrideSchema.safeParse(input).success).toBe(false);
  });
});

describe('mergePolicy', () => {
  it('returns the defaults with no overrides', () => {
    expect(mergePolicy()).toEqual(DEFAULT_POLICY);
    expect(mergePolicy(undefined, null)).toEqual(DEFAULT_POLICY);
  });

  it('applies tenant → conversation → request, later wins, deep', () => {
    const tenant = { keepRecent: 20, scoring: { roleWeights: { user: 8 }, keywords: ['deploy'] } };
    const conversationOverride = { keepRecent: 6, scoring: { roleWeights: { assistant: 1 } } };
    const request = { strategy: 'summarize' as const };
    const policy = mergePolicy(tenant, conversationOverride, request);
    expect(policy.keepRecent).toBe(6);
    expect(policy.strategy).toBe('summarize');
    expect(policy.scoring.roleWeights).toEqual({ system: 10, user: 8, assistant: 1, tool: 2 });
    expect(policy.scoring.keywords).toEqual(['deploy']);
    expect(policy.triggerRatio).toBe(0.7);
  });

  it('replaces arrays whole instead of merging them', () => {
    const policy = mergePolicy({ scoring: { keywords: ['a', 'b'] } }, { scoring: { keywords: ['c'] } });
    expect(policy.scoring.keywords).toEqual(['c']);
  });

  it('does not mutate its inputs', () => {
    const tenant = { scoring: { roleWeights: { user: 8 } } };
    mergePolicy(tenant, { scoring: { roleWeights: { user: 9 } } });
    expect(tenant).toEqual({ scoring: { roleWeights: { user: 8 } } });
  });

  it('rejects a combination that breaks a cross-field rule with INVALID_POLICY', () => {
    const attempt = () => mergePolicy({ triggerRatio: 0.6 }, { targetRatio: 0.65 });
    expect(attempt).toThrow(AppError);
    try {
      attempt();
    } catch (error) {
      expect(error).toMatchObject({ code: 'INVALID_POLICY', status: 400 });
      expect((error as AppError).details?.map((d) => d.field)).toContain('targetRatio');
    }
  });
});

describe('numeric bounds', () => {
  /** Every number of a schema, by dotted path, with its JSON Schema bounds. */
  function numbers(schema: Record<string, unknown>, path: string[] = []): Array<{ path: string; max: number }> {
    const properties = (schema['properties'] ?? {}) as Record<string, Record<string, unknown>>;
    const own = ['integer', 'number'].includes(String(schema['type']))
      ? [{ path: path.join('.'), max: Math.min(Number(schema['maximum'] ?? Infinity), Number(schema['exclusiveMaximum'] ?? Infinity)) }]
      : [];
    return [...own, ...Object.entries(properties).flatMap(([key, child]) => numbers(child, [...path, key]))];
  }

  it('bounds every numeric policy field within an int4 column (a chunk budget, a count, a delay)', () => {
    const fields = numbers(z.toJSONSchema(PolicyOverrideSchema, { io: 'input' }) as Record<string, unknown>);
    expect(fields.length).toBeGreaterThan(25);
    expect(fields.filter((f) => !(f.max <= 2 ** 31 - 1)).map((f) => f.path)).toEqual([]);
  });

  it.each([
    ['summaryMaxTokens', { summaryMaxTokens: 3_000_000_000, chunkTokens: 4_000_000_000 }],
    ['tier1.headTokens', { tier1: { headTokens: 2 ** 53 } }],
    ['idleSeconds', { idleSeconds: 10 ** 10 }],
    ['minMessages', { minMessages: 1e15 }],
  ])('refuses %s past its bound, naming it', (field, override) => {
    const error = (() => {
      try {
        mergePolicy(override);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).details?.map((d) => d.field)).toContain(field);
  });
});
