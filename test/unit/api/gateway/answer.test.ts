import { describe, expect, it } from 'vitest';

import {
  answerFromJson,
  anthropicStreamAccumulator,
  createSseParser,
  openAIStreamAccumulator,
} from '../../../../src/api/gateway/answer.js';

const encode = (text: string) => new TextEncoder().encode(text);

describe('createSseParser', () => {
  it('hands over whole events whatever the chunking, multi-byte characters included', () => {
    const seen: string[] = [];
    const parser = createSseParser((data) => seen.push(data));
    const bytes = encode('event: a\ndata: {"t":"é"}\n\nevent: b\r\ndata: 2\r\n\r\ndata: 3');
    for (let i = 0; i < bytes.length; i += 3) parser.push(bytes.slice(i, i + 3));
    parser.end();
    expect(seen).toEqual(['{"t":"é"}', '2', '3']);
  });
});

describe('anthropicStreamAccumulator', () => {
  it('rebuilds text and tool calls and the whole prompt count', () => {
    const acc = anthropicStreamAccumulator();
    const events = [
      { type: 'message_start', message: { usage: { input_tokens: 10, cache_read_input_tokens: 90, cache_creation_input_tokens: 5 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Run ' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'it.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 't1', name: 'Bash', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"command":' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"ls"}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', usage: { output_tokens: 7 } },
    ];
    for (const event of events) acc.onData(JSON.stringify(event));
    expect(acc.result()).toBeNull();
    acc.onData(JSON.stringify({ type: 'message_stop' }));
    expect(acc.result()).toEqual({
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Run it.' },
            { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } },
          ],
        },
      ],
      inputTokens: 105,
    });
  });
});

describe('anthropicStreamAccumulator (provider compaction)', () => {
  it('rebuilds a compaction block from its start and its one compaction_delta', () => {
    const acc = anthropicStreamAccumulator();
    const events = [
      { type: 'message_start', message: { usage: { input_tokens: 900 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'compaction', content: null, signature: 'simsig1.a.b' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'compaction_delta', content: 'Summary of the work.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'compaction' }, usage: { output_tokens: 40 } },
      { type: 'message_stop' },
    ];
    for (const event of events) acc.onData(JSON.stringify(event));
    expect(acc.result()?.messages).toEqual([
      { role: 'assistant', content: [{ type: 'compaction', content: 'Summary of the work.', signature: 'simsig1.a.b' }] },
    ]);
  });
});

describe('openAIStreamAccumulator', () => {
  it('rebuilds content and tool calls from deltas', () => {
    const acc = openAIStreamAccumulator();
    acc.onData(
      JSON.stringify({
        choices: [
          {
            index: 0,
            delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: '{"a"' } }] },
          },
        ],
      }),
    );
    acc.onData(
      JSON.stringify({
        choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, finish_reason: 'tool_calls' }],
      }),
    );
    acc.onData(JSON.stringify({ choices: [], usage: { prompt_tokens: 33 } }));
    acc.onData('[DONE]');
    expect(acc.result()).toEqual({
      messages: [
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
      ],
      inputTokens: 33,
    });
  });
});

describe('answerFromJson', () => {
  it('reads both providers answers, and nothing else', () => {
    expect(answerFromJson('anthropic', { content: [{ type: 'text', text: 'x' }], usage: { input_tokens: 3 } })).toEqual({
      messages: [{ role: 'assistant', content: [{ type: 'text', text: 'x' }] }],
      inputTokens: 3,
    });
    expect(
      answerFromJson('openai', { choices: [{ message: { role: 'assistant', content: 'y' } }], usage: { prompt_tokens: 4 } })?.inputTokens,
    ).toBe(4);
    expect(answerFromJson('anthropic', { type: 'error' })).toBeNull();
  });
});
