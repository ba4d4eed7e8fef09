import { describe, expect, it } from 'vitest';
import { historyKey, historyStart, planSync, positionOfKey, sharedPrefix, storableMessage } from '../../../../src/api/gateway/history.js';

describe('storableMessage', () => {
  it('keys a message the same whether or not the client marked it for caching or kept its thinking', () => {
    const sent = { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }, { type: 'text', text: 'Done.', cache_control: { type: 'ephemeral' } }, { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' }, caller: { type: 'direct' } }] };
    const resent = { role: 'assistant', content: [{ type: 'text', text: 'Done.' }, { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }] };
    expect(historyKey(3, storableMessage('anthropic', sent))).toBe(historyKey(3, storableMessage('anthropic', resent)));
  });

  it('tells apart the same content at another position, and another content at the same position', () => {
    const message = storableMessage('anthropic', { role: 'user', content: 'hi' });
    expect(historyKey(0, message)).not.toBe(historyKey(1, message));
    expect(historyKey(0, message)).not.toBe(historyKey(0, storableMessage('anthropic', { role: 'user', content: 'hello' })));
    expect(positionOfKey(historyKey(42, message))).toBe(42);
  });

  it('keeps tool results with their text and error flag, and drops what compactd does not store', () => {
    expect(storableMessage('anthropic', { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'out', citations: [] }], is_error: true, cache_control: {} }] })).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'out' }], is_error: true }],
    });
    expect(storableMessage('anthropic', { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'x' }] })).toEqual({ role: 'assistant', content: [{ type: 'text', text: '[empty]' }] });
  });

  it('keeps OpenAI tool calls and drops the SDK echo fields (refusal, annotations)', () => {
    const answer = { role: 'assistant', content: null, refusal: null, annotations: [], tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] };
    expect(storableMessage('openai', answer)).toEqual({ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] });
  });
});

describe('historyStart', () => {
  it('leaves OpenAI leading system and developer messages out of the history', () => {
    const messages = [{ role: 'system', content: 'a' }, { role: 'developer', content: 'b' }, { role: 'user', content: 'c' }, { role: 'system', content: 'd' }];
    expect(historyStart('openai', messages)).toBe(2);
    expect(historyStart('anthropic', messages)).toBe(0);
  });
});

describe('planSync', () => {
  const keys = ['m0-a', 'm1-b', 'm2-c', 'm3-d'];
  it('appends what follows the stored history', () => {
    expect(planSync(keys, new Map())).toEqual({ kind: 'extend', fromPosition: 0 });
    expect(planSync(keys, new Map([[0, 'm0-a'], [1, 'm1-b']]))).toEqual({ kind: 'extend', fromPosition: 2 });
    expect(planSync(keys, new Map(keys.map((key, i) => [i, key])))).toEqual({ kind: 'extend', fromPosition: 4 });
  });
  it('reports where a history stops continuing the stored one', () => {
    expect(planSync(keys, new Map([[0, 'm0-a'], [1, 'm1-x']]))).toEqual({ kind: 'diverged', position: 1 });
    expect(planSync(['m0-a'], new Map([[0, 'm0-a'], [1, 'm1-b']]))).toEqual({ kind: 'diverged', position: 1 });
  });
});

describe('sharedPrefix', () => {
  const keys = ['m0-a', 'm1-b', 'm2-c'];
  it('counts the leading messages stored as the client sent them, whatever is stored after them', () => {
    expect(sharedPrefix(keys, new Map())).toBe(0);
    expect(sharedPrefix(keys, new Map([[0, 'm0-a'], [1, 'm1-b']]))).toBe(2);
    expect(sharedPrefix(keys, new Map([[0, 'm0-a'], [1, 'm1-b'], [2, 'm2-c'], [3, 'm3-d']]))).toBe(3);
    expect(sharedPrefix(keys, new Map([[0, 'm0-a'], [1, 'm1-x'], [2, 'm2-c']]))).toBe(1);
  });
});
