import { describe, expect, it } from 'vitest';

import { contextLimitFor, costUsd, findModel, parseModelSpec, selectSummarizerModel } from '../../../src/llm/models.js';

describe('model registry', () => {
  it.each([
    ['claude-haiku-4-5-20251001', 'claude-haiku-4-5', 200_000],
    ['claude-sonnet-4-20250514', 'claude-sonnet-4', 200_000],
    ['claude-opus-4-1-20250805', 'claude-opus-4-1', 200_000],
    ['anthropic.claude-3-5-sonnet-20240620-v1:0', 'claude-3-5-sonnet', 200_000],
    ['claude-3-5-sonnet@20240620', 'claude-3-5-sonnet', 200_000],
    ['gpt-4o-mini-2024-07-18', 'gpt-4o-mini', 128_000],
    ['openai/gpt-4o', 'gpt-4o', 128_000],
    ['gpt-4.1-mini', 'gpt-4.1-mini', 1_047_576],
    ['o3-mini', 'o3-mini', 200_000],
    ['o1', 'o1', 200_000],
    ['models/gemini-2.5-flash', 'gemini-2.5-flash', 1_048_576],
    ['gemini-1.5-pro-002', 'gemini-1.5-pro', 2_097_152],
  ])('%s is %s with a %i-token window', (name, id, context) => {
    expect(findModel(name)?.id).toBe(id);
    expect(contextLimitFor(name)).toBe(context);
  });

  it('does not let a shorter id claim a longer one', () => {
    expect(findModel('gpt-4.5-preview')).toBeUndefined();
    expect(findModel('gpt-4-0613')?.id).toBe('gpt-4');
    expect(findModel('o1x')).toBeUndefined();
  });

  it('gives unknown models the 128k default', () => {
    expect(contextLimitFor('llama3.1:70b')).toBe(128_000);
  });

  it('prices each usage kind at its own rate', () => {
    const usage = { inputTokens: 1_000_000, outputTokens: 100_000, cacheReadTokens: 2_000_000, cacheWriteTokens: 400_000 };
    // haiku 4.5: $1 in, $5 out, $0.10 cache read, $1.25 cache write per million
    expect(costUsd('claude-haiku-4-5', usage)).toBeCloseTo(1 + 0.5 + 0.2 + 0.5, 10);
    expect(costUsd('gpt-4o-mini', { ...usage, cacheWriteTokens: 0 })).toBeCloseTo(0.15 + 0.06 + 0.15, 10);
    expect(costUsd('local', usage)).toBe(0);
    expect(costUsd('some-unknown-model', usage)).toBe(0);
  });
});

describe('parseModelSpec', () => {
  it.each([
    ['anthropic:claude-haiku-4-5', { provider: 'anthropic', model: 'claude-haiku-4-5' }],
    ['openai', { provider: 'openai' }],
    ['local', { provider: 'local' }],
    ['gpt-4o-mini', { model: 'gpt-4o-mini' }],
    ['openai:meta-llama/llama-3-8b-instruct:free', { provider: 'openai', model: 'meta-llama/llama-3-8b-instruct:free' }],
    ['  ', undefined],
  ])('%s', (spec, expected) => {
    expect(parseModelSpec(spec)).toEqual(expected);
  });
});

describe('selectSummarizerModel (SPEC §5.4 order)', () => {
  const both = ['anthropic', 'openai', 'local'] as const;

  it('request beats policy beats configured default', () => {
    const configured = { provider: 'anthropic' as const, model: 'claude-sonnet-4-5' };
    expect(selectSummarizerModel({ request: 'gpt-4o', policy: 'claude-3-5-haiku', configured, availableProviders: both })).toEqual({
      provider: 'openai',
      model: 'gpt-4o',
    });
    expect(selectSummarizerModel({ policy: 'claude-3-5-haiku', configured, availableProviders: both })).toEqual({
      provider: 'anthropic',
      model: 'claude-3-5-haiku',
    });
    expect(selectSummarizerModel({ configured, availableProviders: both })).toEqual(configured);
  });

  it("a provider without a model gets the provider's cheapest summarizer", () => {
    expect(selectSummarizerModel({ configured: { provider: 'anthropic' }, availableProviders: both })).toEqual({
      provider: 'anthropic',
      model: 'claude-haiku-4-5',
    });
    expect(selectSummarizerModel({ request: 'openai', availableProviders: both })).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
  });

  it('falls back to a configured provider, then to local when none is configured', () => {
    expect(selectSummarizerModel({ availableProviders: ['openai', 'local'] })).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
    expect(selectSummarizerModel({ availableProviders: ['local'] })).toEqual({ provider: 'local', model: 'local' });
    expect(selectSummarizerModel({ request: 'local', availableProviders: both })).toEqual({ provider: 'local', model: 'local' });
  });

  it('routes Gemini and unlisted models through the OpenAI-compatible adapter', () => {
    expect(selectSummarizerModel({ request: 'gemini-2.5-flash', availableProviders: both }).provider).toBe('openai');
    expect(selectSummarizerModel({ request: 'qwen2.5:14b', configured: { provider: 'openai' }, availableProviders: both })).toEqual({
      provider: 'openai',
      model: 'qwen2.5:14b',
    });
  });

  it('refuses a provider that is not configured instead of silently switching', () => {
    expect(() => selectSummarizerModel({ request: 'claude-haiku-4-5', availableProviders: ['openai', 'local'] })).toThrow(
      /provider anthropic is not configured/,
    );
  });
});
