import { describe, expect, it } from 'vitest';

import { renderResponsesContext } from '../../../../src/compaction/context/index.js';

describe('renderResponsesContext', () => {
  it('renders system, user, assistant, calls and results as Responses input items, results after their calls', () => {
    const { input } = renderResponsesContext([
      { role: 'system', content: [{ type: 'text', text: '<compactd-archive>earlier</compactd-archive>' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Fix it' },
          { type: 'image', source: { type: 'url', url: 'https://x/y.png' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'call_1', name: 'exec_command', input: { cmd: 'ls' } },
        ],
      },
      { role: 'tool', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: 'src' }] }] },
      { role: 'assistant', content: [{ type: 'text', text: ' ' }] },
    ]);
    expect(input).toEqual([
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<compactd-archive>earlier</compactd-archive>' }] },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Fix it' },
          { type: 'input_image', image_url: 'https://x/y.png' },
        ],
      },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.' }] },
      { type: 'function_call', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"ls"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'src' },
    ]);
  });
});

describe('renderResponsesContext with a provider compaction', () => {
  const item = { type: 'compaction', encrypted_content: 'simenc1.abc' };
  const history = [
    {
      role: 'assistant' as const,
      content: [{ type: 'text' as const, text: '[compaction]' }],
      native: { compaction: { provider: 'openai' as const, model: 'gpt-5-mini', beta: null, item }, state: '' },
    },
    { role: 'system' as const, content: [{ type: 'text' as const, text: '<compactd-archive>since</compactd-archive>' }] },
    { role: 'user' as const, content: [{ type: 'text' as const, text: 'Go on' }] },
  ];

  it('puts the item itself in its place for the model that made it, or for any model when none is named', () => {
    for (const model of ['gpt-5-mini', undefined]) {
      const { input } = renderResponsesContext(history, model);
      expect(input[0]).toBe(item);
      expect(input.slice(1).map((i) => i['role'])).toEqual(['developer', 'user']);
    }
  });

  it('gives another model the row’s own text instead, and an Anthropic block is never a Responses item', () => {
    expect(renderResponsesContext(history, 'gpt-4o-mini').input[0]).toEqual({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: '[compaction]' }],
    });
    const anthropic = [
      { ...history[0]!, native: { compaction: { provider: 'anthropic' as const, model: 'm', beta: 'b', item: {} }, state: 'ledger' } },
    ];
    expect(renderResponsesContext(anthropic).input).toEqual([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: '[compaction]' }] },
    ]);
  });
});
