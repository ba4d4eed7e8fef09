import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';

import { fromCompactdContext, toCompactdMessage } from '../../../src/integrations/langchain/messages.js';

describe('LangChain messages ⇄ compactd', () => {
  it('stores text, tool calls with usage, and tool results as compactd blocks', () => {
    expect(toCompactdMessage(new SystemMessage('Be brief.'))).toEqual({ role: 'system', content: [{ type: 'text', text: 'Be brief.' }] });
    expect(toCompactdMessage(new HumanMessage('Run the tests.'))).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'Run the tests.' }],
    });
    // the fields as ChatAnthropic fills them (the generic message type infers usage_metadata away)
    const fields = {
      content: [
        { type: 'text', text: 'Running them.' },
        { type: 'tool_use', id: 'toolu_1', name: 'run', input: {} },
      ],
      tool_calls: [{ id: 'toolu_1', name: 'run', args: { path: 'src' }, type: 'tool_call' }],
      usage_metadata: { input_tokens: 1200, output_tokens: 30, total_tokens: 1230 },
    };
    const ai = new AIMessage(fields as unknown as ConstructorParameters<typeof AIMessage>[0]);
    expect(toCompactdMessage(ai)).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Running them.' },
        { type: 'tool_use', id: 'toolu_1', name: 'run', input: { path: 'src' } },
      ],
      usage: { inputTokens: 1200, outputTokens: 30 },
    });
    expect(toCompactdMessage(new ToolMessage({ tool_call_id: 'toolu_1', content: 'boom', status: 'error' }))).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'boom', is_error: true }],
    });
    // an empty answer carries nothing to keep
    expect(toCompactdMessage(new AIMessage(''))).toBeNull();
  });

  it('turns a compactd context back into the messages a chat model takes, tool results before the user text', () => {
    const messages = fromCompactdContext([
      { role: 'user', content: [{ type: 'text', text: 'Run the tests.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Running.' },
          { type: 'tool_use', id: 'toolu_1', name: 'run', input: { path: 'src' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '2 failed' }] },
          { type: 'text', text: 'And now?' },
        ],
      },
    ]);
    expect(messages.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'human']);
    expect((messages[1] as AIMessage).tool_calls).toEqual([{ id: 'toolu_1', name: 'run', args: { path: 'src' }, type: 'tool_call' }]);
    expect((messages[2] as ToolMessage).tool_call_id).toBe('toolu_1');
    expect(messages[2]!.content).toBe('2 failed');
    expect(messages[3]!.content).toBe('And now?');
  });
});
