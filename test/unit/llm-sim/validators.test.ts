import { describe, expect, it } from 'vitest';

import { validateAnthropicRequest } from '../../../src/llm-sim/validate-anthropic.js';
import { validateOpenAIRequest } from '../../../src/llm-sim/validate-openai.js';
import { ANTHROPIC_RULES, OPENAI_RULES } from '../../fixtures/provider-rules.js';

/** The pure validators on one accepted and one rejected request per provider rule. */

describe('validateAnthropicRequest', () => {
  for (const c of ANTHROPIC_RULES) {
    it(c.rule, () => {
      expect(validateAnthropicRequest(c.accepted)).toBeNull();
      const problem = validateAnthropicRequest(c.rejected);
      expect(problem?.param).toBe(c.at);
      expect(problem?.message.startsWith(`${c.at}: `)).toBe(true);
    });
  }

  it('names every unanswered call of the interleaved parallel-call shape', () => {
    const problem = validateAnthropicRequest({
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_a', name: 'Read', input: {} },
            { type: 'tool_use', id: 'toolu_b', name: 'Read', input: {} },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: 'x' }] },
      ],
    });
    expect(problem?.message).toContain('toolu_b');
    expect(problem?.message).not.toContain('toolu_a');
  });

  it('refuses a body without messages, empty messages and empty content except a final assistant prefill', () => {
    expect(validateAnthropicRequest({})?.param).toBe('messages');
    expect(validateAnthropicRequest({ messages: [] })?.param).toBe('messages');
    expect(validateAnthropicRequest({ messages: [{ role: 'user', content: [] }] })?.param).toBe('messages.0');
    expect(
      validateAnthropicRequest({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: '' },
        ],
      }),
    ).toBeNull();
    expect(
      validateAnthropicRequest({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: '' },
          { role: 'user', content: 'y' },
        ],
      })?.param,
    ).toBe('messages.1');
  });

  it('keeps tool blocks on their side: tool_use from the assistant, tool_result from the user', () => {
    const use = { type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} };
    const result = { type: 'tool_result', tool_use_id: 'toolu_1' };
    expect(validateAnthropicRequest({ messages: [{ role: 'user', content: [use] }] })?.param).toBe('messages.0.content.0');
    expect(
      validateAnthropicRequest({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [result] },
        ],
      })?.param,
    ).toBe('messages.1.content.0');
    expect(
      validateAnthropicRequest({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [use] },
          { role: 'user', content: [result] },
        ],
      }),
    ).toBeNull();
  });

  it('refuses tool ids outside [A-Za-z0-9_-]', () => {
    const body = {
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call:1', name: 'Read', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call:1', content: '' }] },
      ],
    };
    expect(validateAnthropicRequest(body)?.param).toBe('messages.1.content.0.id');
  });
});

describe('validateOpenAIRequest', () => {
  for (const c of OPENAI_RULES) {
    it(c.rule, () => {
      expect(validateOpenAIRequest(c.accepted)).toBeNull();
      expect(validateOpenAIRequest(c.rejected)?.param).toBe(c.at);
    });
  }

  it('accepts empty and blank strings, as the API does', () => {
    expect(
      validateOpenAIRequest({
        messages: [
          { role: 'user', content: '' },
          { role: 'assistant', content: '  ' },
        ],
      }),
    ).toBeNull();
  });

  it('names the unanswered calls and refuses a tool message before any call', () => {
    const call = (id: string) => ({ id, type: 'function', function: { name: 'read', arguments: '{}' } });
    const problem = validateOpenAIRequest({
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [call('c1'), call('c2')] },
        { role: 'tool', tool_call_id: 'c2', content: 'x' },
      ],
    });
    expect(problem).toEqual({ param: 'messages[1].role', message: expect.stringContaining('c1') });
    expect(validateOpenAIRequest({ messages: [{ role: 'tool', tool_call_id: 'c1', content: 'x' }] })?.param).toBe('messages[0].role');
    expect(validateOpenAIRequest({ messages: [{ role: 'tool', content: 'x' }] })?.param).toBe('messages[0].tool_call_id');
  });

  it('refuses malformed tool calls and an empty tool_calls list', () => {
    const assistant = (toolCalls: unknown) => ({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: 'y', tool_calls: toolCalls },
      ],
    });
    expect(validateOpenAIRequest(assistant([]))?.param).toBe('messages[1].tool_calls');
    expect(validateOpenAIRequest(assistant([{ id: 'c1', type: 'function', function: { name: 'read' } }]))?.param).toBe(
      'messages[1].tool_calls[0].function',
    );
    expect(validateOpenAIRequest(assistant([{ id: 'c1', type: 'custom', function: { name: 'read', arguments: '{}' } }]))?.param).toBe(
      'messages[1].tool_calls[0].type',
    );
  });
});
