import { describe, expect, it } from 'vitest';

import { parseLlmSimArgs } from '../../../src/app/cli/llm-sim.js';
import type { SummarizeRequest } from '../../../src/compaction/types.js';
import { loadConfig } from '../../../src/config/env.js';
import { availableProviders, createNativeCompactors, createSummarizers, summarizerFor } from '../../../src/llm/create-summarizer.js';
import type { NativeCompactor } from '../../../src/llm/native-port.js';
import type { Summarizer } from '../../../src/llm/port.js';
import type { ProviderAdapters } from '../../../src/llm/provider-adapters.js';

describe('createSummarizers', () => {
  it('always has local; a remote provider needs a key or a base URL', () => {
    const none = createSummarizers(loadConfig({}));
    expect(availableProviders(none)).toEqual(['local']);
    expect(() => summarizerFor(none, 'anthropic')).toThrow(/ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL/);

    const both = createSummarizers(loadConfig({ ANTHROPIC_API_KEY: 'sk-ant-x', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }));
    expect(availableProviders(both)).toEqual(['anthropic', 'openai', 'local']);
    expect(summarizerFor(both, 'openai').provider).toBe('openai');
  });
});

/** Adapters that count their loads and answer without a network (the SDK adapters are tested against llm-sim). */
function countingAdapters(failFirst = false) {
  const loads = { anthropic: 0, openai: 0 };
  const summarizer = (provider: 'anthropic' | 'openai'): Summarizer => ({
    provider,
    summarize: () =>
      Promise.resolve({
        text: `from ${provider}`,
        stopReason: 'end',
        model: 'm',
        usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
        latencyMs: 1,
      }),
  });
  const compactor = (provider: 'anthropic' | 'openai') => ({ provider }) as NativeCompactor;
  const adapters: ProviderAdapters = {
    anthropic: () => {
      loads.anthropic += 1;
      if (failFirst && loads.anthropic === 1) return Promise.reject(new Error('module failed to load'));
      return Promise.resolve({
        createAnthropicSummarizer: () => summarizer('anthropic'),
        createAnthropicCompactor: () => compactor('anthropic'),
      });
    },
    openai: () => {
      loads.openai += 1;
      return Promise.resolve({ createOpenAISummarizer: () => summarizer('openai'), createOpenAICompactor: () => compactor('openai') });
    },
  };
  return { loads, adapters };
}

const request: SummarizeRequest = { system: 's', messages: [{ role: 'user', content: 'x' }], maxOutputTokens: 64 };
const both = loadConfig({ ANTHROPIC_API_KEY: 'sk-ant-x', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' });

describe('provider adapters', () => {
  it('are loaded on their first call, once, and a provider never called is never loaded', async () => {
    const { loads, adapters } = countingAdapters();
    const summarizers = createSummarizers(both, { adapters });
    const compactors = createNativeCompactors(both, { adapters });
    expect(compactors.anthropic?.provider).toBe('anthropic');
    expect(loads).toEqual({ anthropic: 0, openai: 0 });

    const anthropic = summarizerFor(summarizers, 'anthropic');
    const answers = await Promise.all([anthropic.summarize(request, { model: 'm' }), anthropic.summarize(request, { model: 'm' })]);
    await anthropic.summarize(request, { model: 'm' });
    expect(answers.map((a) => a.text)).toEqual(['from anthropic', 'from anthropic']);
    expect(loads).toEqual({ anthropic: 1, openai: 0 });
  });

  it('a failed load is tried again on the next call', async () => {
    const { loads, adapters } = countingAdapters(true);
    const anthropic = summarizerFor(createSummarizers(both, { adapters }), 'anthropic');
    await expect(anthropic.summarize(request, { model: 'm' })).rejects.toThrow('module failed to load');
    expect((await anthropic.summarize(request, { model: 'm' })).text).toBe('from anthropic');
    expect(loads).toEqual({ anthropic: 2, openai: 0 });
  });
});

describe('compactd llm-sim arguments', () => {
  it('parses profile, faults, seed, loss rate and window', () => {
    expect(
      parseLlmSimArgs([
        '--port',
        '0',
        '--profile',
        'haiku',
        '--faults',
        '429=0.1,hang=0.01',
        '--retry-after-ms',
        '250',
        '--seed',
        '9',
        '--loss-rate',
        '0.2',
        '--summarize-window',
        '8000',
      ]),
    ).toEqual({
      host: '127.0.0.1',
      port: 0,
      profile: 'haiku',
      faults: { rates: { rate_limit: 0.1, hang: 0.01 }, retryAfterMs: 250 },
      seed: 9,
      lossRate: 0.2,
      summarizeWindow: 8000,
      graceMs: 5_000,
    });
    expect(parseLlmSimArgs(['--help'])).toBe('help');
    expect(parseLlmSimArgs(['--overrun', '0.3', '--overrun-factor', '1.4'])).toMatchObject({ overrun: { rate: 0.3, factor: 1.4 } });
    expect(parseLlmSimArgs(['--overrun', '1'])).toMatchObject({ overrun: { rate: 1 } });
    expect(() => parseLlmSimArgs(['--overrun-factor', 'x'])).toThrow(/--overrun-factor/);
  });

  it('names the bad option', () => {
    expect(() => parseLlmSimArgs(['--port', 'abc'])).toThrow(/--port/);
    expect(() => parseLlmSimArgs(['--bogus'])).toThrow();
  });
});
