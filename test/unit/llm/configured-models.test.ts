import { describe, expect, it } from 'vitest';

import { loadConfig } from '../../../src/config/env.js';
import { configuredModels, configuredSummarizer, modelSpecProblem } from '../../../src/llm/configured-models.js';
import { type ModelSpec, selectSummarizerModel } from '../../../src/llm/models.js';

const models = (env: Record<string, string>) => configuredModels(loadConfig(env));

describe('modelSpecProblem', () => {
  it.each([
    // [environment, spec, problem (null: accepted)]
    [{}, 'local', null],
    [{}, 'local:local', null],
    [{}, 'local:tiny', /one model/],
    [{}, 'openai:gpt-4o', /openai provider, which is not configured \(set OPENAI_API_KEY or OPENAI_BASE_URL\)/],
    [{}, 'claude-haiku-4-5', /anthropic provider, which is not configured/],
    [{}, 'my-ollama-model', /not configured/],
    [{}, '   ', /must name a provider/],
    [{ ANTHROPIC_API_KEY: 'k' }, 'anthropic', null],
    [{ ANTHROPIC_API_KEY: 'k' }, 'claude-haiku-4-5-20251001', null],
    [{ ANTHROPIC_API_KEY: 'k' }, 'anthropic:claude-nope', /unknown model "claude-nope" for anthropic/],
    [{ ANTHROPIC_API_KEY: 'k' }, 'anthropic:gpt-4o-mini', /model of openai, not served by anthropic/],
    [{ OPENAI_API_KEY: 'k' }, 'gpt-4o-mini', null],
    [{ OPENAI_API_KEY: 'k' }, 'openai:gemini-2.0-flash', /compatible endpoint/],
    [{ OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }, 'openai:gemini-2.0-flash', null],
    [{ OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }, 'llama3.1:8b', null],
    [{ OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1', COMPACTD_SUMMARIZER: 'openai:llama3.1:8b' }, 'qwen2.5', null],
    [{ ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5' }, 'my-proxy-alias', null],
  ] as const)('%j: %s', (env, spec, expected) => {
    const problem = modelSpecProblem(spec, models(env as Record<string, string>));
    if (expected === null) expect(problem).toBeNull();
    else expect(problem).toMatch(expected);
  });
});

/** The model a job gets under this environment (what the summarize step computes from the config). */
function selected(env: Record<string, string>, choices: { request?: ModelSpec; policy?: ModelSpec } = {}) {
  const config = loadConfig(env);
  return selectSummarizerModel({
    ...choices,
    configured: configuredSummarizer(config),
    availableProviders: configuredModels(config).available,
  });
}

describe('summarizer precedence: request > policy > COMPACTD_SUMMARIZER > first configured provider > local', () => {
  it.each([
    // [environment, expected provider:model]
    [{}, 'local:local'],
    [{ ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }, 'anthropic:claude-haiku-4-5'],
    [{ ANTHROPIC_API_KEY: 'k', OPENAI_API_KEY: 'k' }, 'anthropic:claude-haiku-4-5'],
    [{ OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }, 'openai:gpt-4o-mini'],
    // an explicit COMPACTD_SUMMARIZER wins over whatever the base URLs and keys make available
    [{ ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', COMPACTD_SUMMARIZER: 'local' }, 'local:local'],
    [{ ANTHROPIC_API_KEY: 'k', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1', COMPACTD_SUMMARIZER: 'local' }, 'local:local'],
    [
      { ANTHROPIC_API_KEY: 'k', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1', COMPACTD_SUMMARIZER: 'openai:llama3.1:8b' },
      'openai:llama3.1:8b',
    ],
    [{ ANTHROPIC_API_KEY: 'k', OPENAI_API_KEY: 'k', COMPACTD_SUMMARIZER: 'openai' }, 'openai:gpt-4o-mini'],
    // an empty variable is unset: the default applies
    [{ ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', COMPACTD_SUMMARIZER: '' }, 'anthropic:claude-haiku-4-5'],
  ] as const)('%j → %s', (env, expected) => {
    const { provider, model } = selected(env as Record<string, string>);
    expect(`${provider}:${model}`).toBe(expected);
  });

  it('a compaction request or a policy still chooses its provider over COMPACTD_SUMMARIZER', () => {
    const env = { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', COMPACTD_SUMMARIZER: 'local' };
    expect(selected(env, { request: 'anthropic:claude-haiku-4-5' })).toEqual({ provider: 'anthropic', model: 'claude-haiku-4-5' });
    expect(selected(env, { policy: 'anthropic' })).toEqual({ provider: 'anthropic', model: 'claude-haiku-4-5' });
    expect(selected({ ANTHROPIC_API_KEY: 'k', COMPACTD_SUMMARIZER: 'anthropic' }, { policy: 'local' })).toEqual({
      provider: 'local',
      model: 'local',
    });
    expect(selected(env, { request: 'local', policy: 'anthropic' })).toEqual({ provider: 'local', model: 'local' });
  });

  it('an explicit provider without its key or base URL is an error, not a silent fallback', () => {
    expect(() => selected({ COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5' })).toThrow(/not configured/);
  });
});
