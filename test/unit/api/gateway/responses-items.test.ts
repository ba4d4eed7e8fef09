import { describe, expect, it } from 'vitest';

import { historyKey, historyStart, storableMessage } from '../../../../src/api/gateway/history.js';
import { normalizeMessages } from '../../../../src/compaction/normalize.js';

const key = (position: number, item: unknown) => historyKey(position, storableMessage('responses', item));

describe('storableMessage (Responses items)', () => {
  it('stores messages, calls and their outputs in the shape the normalizer takes', () => {
    const items = [
      { role: 'user', content: 'Run the tests' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Running them.', annotations: [] }] },
      { type: 'function_call', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"npm test"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'not ok 3' },
      { type: 'local_shell_call', call_id: 'call_2', action: { type: 'exec', command: ['ls'] }, status: 'completed' },
      { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'src' }] },
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'The cache is stale.' }], encrypted_content: 'gAAA' },
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Be brief.' }] },
    ];
    const stored = items.map((item) => storableMessage('responses', item));
    expect(stored.map((m) => m['role'])).toEqual(['user', 'assistant', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'system']);
    expect(stored[2]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'call_1', name: 'exec_command', input: { cmd: 'npm test' } }],
    });
    expect(stored[3]).toEqual({ role: 'tool', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'not ok 3' }] });
    expect(stored[4]?.['content']).toEqual([
      { type: 'tool_use', id: 'call_2', name: 'local_shell_call', input: { action: { type: 'exec', command: ['ls'] } } },
    ]);
    expect(JSON.stringify(stored[6])).toContain('The cache is stale.');
    expect(JSON.stringify(stored[6])).not.toContain('gAAA');
    // compactd's normalizer takes every one of them, tool pairing included
    const normalized = normalizeMessages(stored, 'anthropic');
    expect(normalized.ok, JSON.stringify(normalized)).toBe(true);
  });

  it('keys an answer item and the same item sent back alike (ids, status and annotations are not history)', () => {
    const answered = {
      id: 'msg_sim_7',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Done.', annotations: [], logprobs: [] }],
    };
    const sentBack = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] };
    expect(key(4, sentBack)).toBe(key(4, answered));
    expect(key(4, { role: 'user', content: 'x' })).toBe(
      key(4, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'x' }] }),
    );
    expect(key(4, sentBack)).not.toBe(key(4, { ...sentBack, content: [{ type: 'output_text', text: 'Done!' }] }));
  });

  it('stores a provider compaction item pinned and whole, less its id', () => {
    const item = { id: 'cmp_1', type: 'compaction', encrypted_content: 'simenc1.abc' };
    const stored = storableMessage('responses', item);
    expect(stored['pinned']).toBe(true);
    expect(stored['metadata']).toEqual({
      providerCompaction: { provider: 'openai', item: { type: 'compaction', encrypted_content: 'simenc1.abc' } },
    });
    expect(key(9, { type: 'compaction', encrypted_content: 'simenc1.abc' })).toBe(key(9, item));
  });

  it('starts the history after the leading developer and system messages', () => {
    const input = [
      { role: 'developer', content: 'a' },
      { type: 'message', role: 'system', content: 'b' },
      { role: 'user', content: 'c' },
      { role: 'developer', content: 'd' },
    ];
    expect(historyStart('responses', input)).toBe(2);
  });
});

describe('storableMessage (Anthropic compaction blocks)', () => {
  it('stores the block as its summary text, pinned, the block itself in the metadata', () => {
    const block = {
      type: 'compaction',
      content: 'Summary: fixed the cache.',
      signature: 'simsig1.x.y',
      cache_control: { type: 'ephemeral' },
    };
    const stored = storableMessage('anthropic', { role: 'assistant', content: [block] });
    expect(stored).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Summary: fixed the cache.' }],
      pinned: true,
      metadata: {
        providerCompaction: {
          provider: 'anthropic',
          item: { type: 'compaction', content: 'Summary: fixed the cache.', signature: 'simsig1.x.y' },
        },
      },
    });
    // a failed compaction (null content) stands for nothing
    expect(
      storableMessage('anthropic', {
        role: 'assistant',
        content: [
          { type: 'compaction', content: null },
          { type: 'text', text: 'ok' },
        ],
      })['pinned'],
    ).toBeUndefined();
  });
});
