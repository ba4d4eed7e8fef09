import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';

import { fromCompactdContext, toCompactdMessage } from '../../../src/integrations/ai-sdk/messages.js';
import { digest, idempotencyKey } from '../../../src/integrations/conversation-sync.js';

describe('AI SDK messages ⇄ compactd', () => {
  it('stores text, tool calls and tool results (errors marked) as compactd blocks', () => {
    const history: ModelMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Run the tests.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'hmm' },
          { type: 'text', text: 'Running.' },
          { type: 'tool-call', toolCallId: 't1', toolName: 'run', input: { path: 'src' } },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 't1', toolName: 'run', output: { type: 'json', value: { failed: 2 } } },
          { type: 'tool-result', toolCallId: 't2', toolName: 'run', output: { type: 'error-text', value: 'timeout' } },
        ],
      },
    ];
    expect(history.map(toCompactdMessage)).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Run the tests.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Running.' },
          { type: 'tool_use', id: 't1', name: 'run', input: { path: 'src' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: '{"failed":2}' },
          { type: 'tool_result', tool_use_id: 't2', content: 'timeout', is_error: true },
        ],
      },
    ]);
    expect(toCompactdMessage({ role: 'assistant', content: '' })).toBeNull();
  });

  it('turns a compactd context back into ModelMessages, naming each result’s tool from its call', () => {
    const messages = fromCompactdContext([
      { role: 'user', content: [{ type: 'text', text: 'Run the tests.' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'run', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'boom', is_error: true },
          { type: 'text', text: 'Fix it.' },
        ],
      },
    ]);
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Run the tests.' }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 't1', toolName: 'run', input: {} }] },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 't1', toolName: 'run', output: { type: 'error-text', value: 'boom' } }],
      },
      { role: 'user', content: [{ type: 'text', text: 'Fix it.' }] },
    ]);
  });

  it('keys appends stably, within the header limit', () => {
    expect(idempotencyKey('ai-sdk', 'conv', 'm0-abc')).toBe('ai-sdk:conv:m0-abc');
    const long = idempotencyKey('ai-sdk', 'c'.repeat(300), 'm0');
    expect(long.length).toBeLessThanOrEqual(255);
    expect(long).toBe(idempotencyKey('ai-sdk', 'c'.repeat(300), 'm0'));
    expect(digest('a')).not.toBe(digest('b'));
  });
});
