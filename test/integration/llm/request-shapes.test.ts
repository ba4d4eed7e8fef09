import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import type { SummarizeRequest } from '../../../src/compaction/types.js';
import { createAnthropicSummarizer, LEADING_USER_TURN } from '../../../src/llm/anthropic.js';
import { createOpenAISummarizer } from '../../../src/llm/openai.js';
import type { Summarizer } from '../../../src/llm/port.js';

/**
 * What reaches the provider (seed 003, AC2): read back from llm-sim's recorded request
 * bodies, after the official SDKs serialized them.
 */

let sim: TestLlmSim;
beforeAll(async () => {
  sim = await startTestLlmSim();
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => sim.control.reset());

const REQUEST: SummarizeRequest = {
  system: 'Configured summarizer prompt.',
  messages: [
    { role: 'system', content: 'Previous summary: A.' },
    { role: 'user', content: 'first user turn' },
    { role: 'system', content: 'Second context: B.' },
    { role: 'assistant', content: 'assistant one' },
    { role: 'assistant', content: 'assistant two' },
    { role: 'user', content: 'tool output as user text' },
    { role: 'user', content: 'the directive' },
  ],
  maxOutputTokens: 600,
};

async function sentBody(summarizer: Summarizer, request: SummarizeRequest, model: string): Promise<Record<string, unknown>> {
  await summarizer.summarize(request, { model });
  const [call] = sim.control.callLog();
  return call?.body as Record<string, unknown>;
}

describe('Anthropic request shape', () => {
  const anthropic = (): Summarizer => createAnthropicSummarizer({ apiKey: 'k', baseURL: sim.url });

  it('merges system-role messages into `system` after the configured prompt, joined by blank lines', async () => {
    const body = await sentBody(anthropic(), REQUEST, 'claude-haiku-4-5');
    expect(body['system']).toBe('Configured summarizer prompt.\n\nPrevious summary: A.\n\nSecond context: B.');
    expect(body['max_tokens']).toBe(600);
    expect(body['model']).toBe('claude-haiku-4-5');
  });

  it('keeps user/assistant roles and merges consecutive same-role turns', async () => {
    const body = await sentBody(anthropic(), REQUEST, 'claude-haiku-4-5');
    expect(body['messages']).toEqual([
      { role: 'user', content: 'first user turn' },
      { role: 'assistant', content: 'assistant one\n\nassistant two' },
      { role: 'user', content: 'tool output as user text\n\nthe directive' },
    ]);
  });

  it('sends no system field and no empty context when there is none (AC1.5)', async () => {
    const body = await sentBody(anthropic(), { system: '', messages: [{ role: 'user', content: 'only this' }], maxOutputTokens: 300 }, 'm');
    expect(body).not.toHaveProperty('system');
    expect(body['messages']).toEqual([{ role: 'user', content: 'only this' }]);
  });

  it('opens with a user turn when the excerpt starts with the assistant, and drops blank messages', async () => {
    const request: SummarizeRequest = {
      system: 'p',
      messages: [
        { role: 'assistant', content: 'I edited src/a.ts' },
        { role: 'user', content: '   ' },
        { role: 'user', content: 'directive' },
      ],
      maxOutputTokens: 300,
    };
    const body = await sentBody(anthropic(), request, 'm');
    expect(body['messages']).toEqual([
      { role: 'user', content: LEADING_USER_TURN },
      { role: 'assistant', content: 'I edited src/a.ts' },
      { role: 'user', content: 'directive' },
    ]);
  });
});

describe('OpenAI request shape', () => {
  const openai = (options: { maxTokensField?: 'max_tokens' | 'max_completion_tokens' } = {}): Summarizer =>
    createOpenAISummarizer({ apiKey: 'k', baseURL: sim.openaiBaseUrl, ...options });

  it('passes system-role messages through in order, after the configured prompt, roles preserved', async () => {
    const body = await sentBody(openai(), REQUEST, 'gpt-4o-mini');
    expect(body['messages']).toEqual([
      { role: 'system', content: 'Configured summarizer prompt.' },
      { role: 'system', content: 'Previous summary: A.' },
      { role: 'user', content: 'first user turn' },
      { role: 'system', content: 'Second context: B.' },
      { role: 'assistant', content: 'assistant one' },
      { role: 'assistant', content: 'assistant two' },
      { role: 'user', content: 'tool output as user text' },
      { role: 'user', content: 'the directive' },
    ]);
  });

  it('sends max_tokens to compatible servers, max_completion_tokens when asked', async () => {
    expect(await sentBody(openai(), REQUEST, 'gpt-4o-mini')).toMatchObject({ max_tokens: 600 });
    sim.control.reset();
    const body = await sentBody(openai({ maxTokensField: 'max_completion_tokens' }), REQUEST, 'o4-mini');
    expect(body).toMatchObject({ max_completion_tokens: 600, model: 'o4-mini' });
    expect(body).not.toHaveProperty('max_tokens');
  });

  it('sends no system message when the configured prompt is empty', async () => {
    const body = await sentBody(openai(), { system: '', messages: [{ role: 'user', content: 'only this' }], maxOutputTokens: 300 }, 'm');
    expect(body['messages']).toEqual([{ role: 'user', content: 'only this' }]);
  });
});
