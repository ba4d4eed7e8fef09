import { describe, expect, it } from 'vitest';

import { parseLlmSimArgs } from '../../../src/app/cli/llm-sim.js';
import { loadConfig } from '../../../src/config/env.js';
import { availableProviders, createSummarizers, summarizerFor } from '../../../src/llm/create-summarizer.js';

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
