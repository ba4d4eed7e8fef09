import { describe, expect, it } from 'vitest';

import { answerFromJson } from '../../../../src/api/gateway/answer.js';
import { responsesStreamAccumulator, storedOutputItems } from '../../../../src/api/gateway/responses-answer.js';

const message = (id: string, text: string) => ({
  id,
  type: 'message',
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [] }],
});

describe('responsesStreamAccumulator', () => {
  it('takes the output of response.completed, with the whole prompt count', () => {
    const acc = responsesStreamAccumulator();
    const call = {
      id: 'fc_1',
      type: 'function_call',
      status: 'completed',
      call_id: 'call_1',
      name: 'exec_command',
      arguments: '{"cmd":"ls"}',
    };
    acc.onData(JSON.stringify({ type: 'response.created', response: { output: [] } }));
    acc.onData(JSON.stringify({ type: 'response.output_text.delta', delta: 'Lis' }));
    acc.onData(JSON.stringify({ type: 'response.output_item.done', item: message('msg_1', 'Listing.') }));
    expect(acc.result()).toBeNull();
    acc.onData(
      JSON.stringify({
        type: 'response.completed',
        response: {
          output: [message('msg_1', 'Listing.'), call],
          usage: { input_tokens: 1200, input_tokens_details: { cached_tokens: 1000 } },
        },
      }),
    );
    expect(acc.result()).toEqual({ messages: [message('msg_1', 'Listing.'), call], inputTokens: 1200 });
  });

  it('keeps an answer cut at max_output_tokens, and nothing of a failed one', () => {
    const cut = responsesStreamAccumulator();
    cut.onData(JSON.stringify({ type: 'response.incomplete', response: { output: [message('m', 'Half')], usage: { input_tokens: 5 } } }));
    expect(cut.result()?.messages).toHaveLength(1);
    const failed = responsesStreamAccumulator();
    failed.onData(JSON.stringify({ type: 'response.output_item.done', item: message('m', 'x') }));
    failed.onData(JSON.stringify({ type: 'response.failed', response: { error: { message: 'boom' } } }));
    expect(failed.result()).toBeNull();
  });
});

describe('storedOutputItems', () => {
  it('keeps an output whole, or from its compaction item on', () => {
    const kept = { id: 'u', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'task' }] };
    const item = { id: 'cmp_1', type: 'compaction', encrypted_content: 'simenc1.x' };
    expect(storedOutputItems([kept, item])).toEqual([item]);
    expect(storedOutputItems([message('a', 'x')])).toEqual([message('a', 'x')]);
  });

  it('reads a non-streamed response through answerFromJson', () => {
    expect(
      answerFromJson('responses', { object: 'response', status: 'completed', output: [message('a', 'x')], usage: { input_tokens: 9 } }),
    ).toEqual({ messages: [message('a', 'x')], inputTokens: 9 });
    expect(answerFromJson('responses', { error: { message: 'no' } })).toBeNull();
  });
});
