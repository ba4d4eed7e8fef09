import { describe, expect, it } from 'vitest';

import {
  historyKey,
  historyStart,
  planSync,
  positionOfKey,
  sharedPrefix,
  storableMessage,
  storableText,
} from '../../../../src/api/gateway/history.js';

describe('storableMessage', () => {
  it('keys a message the same whether or not the client marked it for caching or kept its thinking', () => {
    const sent = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 's' },
        { type: 'text', text: 'Done.', cache_control: { type: 'ephemeral' } },
        { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' }, caller: { type: 'direct' } },
      ],
    };
    const resent = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Done.' },
        { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } },
      ],
    };
    expect(historyKey(3, storableMessage('anthropic', sent))).toBe(historyKey(3, storableMessage('anthropic', resent)));
  });

  it('tells apart the same content at another position, and another content at the same position', () => {
    const message = storableMessage('anthropic', { role: 'user', content: 'hi' });
    expect(historyKey(0, message)).not.toBe(historyKey(1, message));
    expect(historyKey(0, message)).not.toBe(historyKey(0, storableMessage('anthropic', { role: 'user', content: 'hello' })));
    expect(positionOfKey(historyKey(42, message))).toBe(42);
  });

  it('keeps tool results with their text and error flag, and drops what compactd does not store', () => {
    expect(
      storableMessage('anthropic', {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 't1',
            content: [{ type: 'text', text: 'out', citations: [] }],
            is_error: true,
            cache_control: {},
          },
        ],
      }),
    ).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'out' }], is_error: true }],
    });
    expect(storableMessage('anthropic', { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'x' }] })).toEqual({
      role: 'assistant',
      content: '[empty]',
    });
  });

  it('keeps OpenAI tool calls and drops the SDK echo fields (refusal, annotations)', () => {
    const answer = {
      role: 'assistant',
      content: null,
      refusal: null,
      annotations: [],
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    };
    expect(storableMessage('openai', answer)).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    });
  });
});

describe('historyStart', () => {
  it('leaves OpenAI leading system and developer messages out of the history', () => {
    const messages = [
      { role: 'system', content: 'a' },
      { role: 'developer', content: 'b' },
      { role: 'user', content: 'c' },
      { role: 'system', content: 'd' },
    ];
    expect(historyStart('openai', messages)).toBe(2);
    expect(historyStart('anthropic', messages)).toBe(0);
  });
});

describe('planSync', () => {
  const keys = ['m0-a', 'm1-b', 'm2-c', 'm3-d'];
  const stored = (entries: Array<[number, string]>, activeFrom = 0) => ({ keys: new Map(entries), activeFrom });
  it('appends what follows the stored history', () => {
    expect(planSync(keys, stored([]))).toEqual({ kind: 'extend', fromPosition: 0 });
    expect(
      planSync(
        keys,
        stored([
          [0, 'm0-a'],
          [1, 'm1-b'],
        ]),
      ),
    ).toEqual({ kind: 'extend', fromPosition: 2 });
    expect(planSync(keys, stored(keys.map((key, i) => [i, key])))).toEqual({ kind: 'extend', fromPosition: 4 });
  });
  it('follows a client that went back to an earlier point of the active history: an edit, a rewind, a retry', () => {
    // turn 1 edited
    expect(
      planSync(
        keys,
        stored([
          [0, 'm0-a'],
          [1, 'm1-x'],
        ]),
      ),
    ).toEqual({ kind: 'rewind', position: 1 });
    // a retry of a request whose answer is stored: the client sends one message fewer
    expect(
      planSync(
        ['m0-a'],
        stored([
          [0, 'm0-a'],
          [1, 'm1-b'],
        ]),
      ),
    ).toEqual({ kind: 'rewind', position: 1 });
  });
  it('does not follow a divergence inside the compacted prefix, and tells another thread apart', () => {
    expect(
      planSync(
        keys,
        stored(
          [
            [0, 'm0-a'],
            [1, 'm1-x'],
            [2, 'm2-c'],
            [3, 'm3-d'],
          ],
          3,
        ),
      ),
    ).toEqual({ kind: 'diverged-compacted', position: 1 });
    expect(
      planSync(
        keys,
        stored(
          [
            [0, 'm0-a'],
            [1, 'm1-b'],
            [2, 'm2-x'],
          ],
          2,
        ),
      ),
    ).toEqual({ kind: 'rewind', position: 2 });
    expect(
      planSync(
        ['m0-z', 'm1-b'],
        stored([
          [0, 'm0-a'],
          [1, 'm1-b'],
        ]),
      ),
    ).toEqual({ kind: 'other-thread' });
  });
});

describe('storable text', () => {
  it('stores a NUL or a lone surrogate as a visible stand-in, and keys it the same every time', () => {
    const sent = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ELF\u0000\u0001 bad \ud800 end' }] };
    const storable = storableMessage('anthropic', sent);
    expect(JSON.stringify(storable)).not.toMatch(/\\u0000|\\ud800/);
    expect(storableText('a\u0000b\ud800c\udc00d\ud83d\ude00')).toBe('a\u2400b\ufffdc\ufffdd\ud83d\ude00');
    expect(historyKey(2, storable)).toBe(historyKey(2, storableMessage('anthropic', structuredClone(sent))));
  });
  it('keys an OpenAI tool-call-only answer the same with content null or empty, and an empty Anthropic turn either way', () => {
    const call = { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } };
    expect(historyKey(1, storableMessage('openai', { role: 'assistant', content: null, tool_calls: [call] }))).toBe(
      historyKey(1, storableMessage('openai', { role: 'assistant', content: '', tool_calls: [call] })),
    );
    expect(historyKey(1, storableMessage('anthropic', { role: 'assistant', content: [] }))).toBe(
      historyKey(1, storableMessage('anthropic', { role: 'assistant', content: '' })),
    );
  });
});

describe('sharedPrefix', () => {
  const keys = ['m0-a', 'm1-b', 'm2-c'];
  it('counts the leading messages stored as the client sent them, whatever is stored after them', () => {
    expect(sharedPrefix(keys, new Map())).toBe(0);
    expect(
      sharedPrefix(
        keys,
        new Map([
          [0, 'm0-a'],
          [1, 'm1-b'],
        ]),
      ),
    ).toBe(2);
    expect(
      sharedPrefix(
        keys,
        new Map([
          [0, 'm0-a'],
          [1, 'm1-b'],
          [2, 'm2-c'],
          [3, 'm3-d'],
        ]),
      ),
    ).toBe(3);
    expect(
      sharedPrefix(
        keys,
        new Map([
          [0, 'm0-a'],
          [1, 'm1-x'],
          [2, 'm2-c'],
        ]),
      ),
    ).toBe(1);
  });
});

describe('storable keys', () => {
  it('makes a tool input key with a NUL storable, keeping the keys in order', () => {
    const storable = storableMessage('anthropic', {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 't1', name: 'f', input: { 'a\u0000b': 1, z: 2 } }],
    });
    expect((storable['content'] as Array<{ input: Record<string, number> }>)[0]?.input).toEqual({ 'a\u2400b': 1, z: 2 });
    expect(Object.keys((storable['content'] as Array<{ input: Record<string, number> }>)[0]!.input)).toEqual(['a\u2400b', 'z']);
  });
});
