import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/env.js';
import { configuredModels, modelSpecProblem } from '../../../src/llm/configured-models.js';

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
