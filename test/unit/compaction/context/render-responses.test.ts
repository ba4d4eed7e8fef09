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
