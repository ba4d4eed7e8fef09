import { describe, expect, it } from 'vitest';

import { historyKey, storableMessage } from '../../../../src/api/gateway/history.js';
import { keysOfHistory, rememberKeys, sameJson } from '../../../../src/api/gateway/key-memo.js';

const keyed = (history: unknown[]) => history.map((message, position) => historyKey(position, storableMessage('anthropic', message)));

describe('history key memo', () => {
  const history = [
    { role: 'user', content: 'fix the cache' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls', cwd: '/' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a b' }] },
  ];

  it('gives every message the key history.ts gives it, whether remembered or not', () => {
    const first = keysOfHistory('tenant/c1', 'anthropic', history);
    expect(first).toEqual(keyed(history));
    rememberKeys('tenant/c1', 'anthropic', history, first, 100);
    const next = [...structuredClone(history), { role: 'assistant', content: 'done' }];
    expect(keysOfHistory('tenant/c1', 'anthropic', next)).toEqual(keyed(next));
  });

  it('keys an edited message again, so a diverging history is still told apart', () => {
    rememberKeys('tenant/c2', 'anthropic', history, keyed(history), 100);
    const edited = structuredClone(history);
    (edited[1] as { content: Array<{ input: Record<string, unknown> }> }).content[0]!.input['command'] = 'rm -rf /';
    const keys = keysOfHistory('tenant/c2', 'anthropic', edited);
    expect(keys).toEqual(keyed(edited));
    expect(keys[1]).not.toBe(keyed(history)[1]);
    // the same content with its keys in another order serializes differently: keyed again
    const reordered = structuredClone(history);
    (reordered[1] as { content: Array<{ input: Record<string, unknown> }> }).content[0]!.input = { cwd: '/', command: 'ls' };
    expect(keysOfHistory('tenant/c2', 'anthropic', reordered)).toEqual(keyed(reordered));
  });

  it('does not reuse keys across providers or positions', () => {
    rememberKeys('tenant/c3', 'openai', history, ['m0-x', 'm1-x', 'm2-x'], 100);
    expect(keysOfHistory('tenant/c3', 'anthropic', history)).toEqual(keyed(history));
    rememberKeys('tenant/c3', 'anthropic', history, keyed(history), 100);
    const shifted = [{ role: 'user', content: 'first' }, ...history];
    expect(keysOfHistory('tenant/c3', 'anthropic', shifted)).toEqual(keyed(shifted));
  });

  it('forgets the least recently remembered conversations past its size bound', () => {
    const huge = 10 * 1024 * 1024;
    rememberKeys('tenant/big-1', 'anthropic', history, ['m0-stale', 'm1-stale', 'm2-stale'], huge);
    rememberKeys('tenant/big-2', 'anthropic', history, ['m0-stale', 'm1-stale', 'm2-stale'], huge);
    // big-1 was forgotten to make room for big-2: its keys are computed again
    expect(keysOfHistory('tenant/big-1', 'anthropic', history)).toEqual(keyed(history));
    expect(keysOfHistory('tenant/big-2', 'anthropic', history)[0]).toBe('m0-stale');
  });

  it('counts a message nested too deeply to compare as changed', () => {
    const nested = () => {
      let deep: unknown = 'x';
      for (let i = 0; i < 200_000; i += 1) deep = [deep];
      return { role: 'user', content: 'hi', extra: deep };
    };
    const message = nested();
    rememberKeys('tenant/c4', 'anthropic', [nested()], ['m0-stale'], 100);
    expect(keysOfHistory('tenant/c4', 'anthropic', [message])).toEqual(keyed([message]));
  });
});

describe('sameJson', () => {
  it('is strict JSON equality with key order', () => {
    expect(sameJson({ a: [1, { b: null }] }, { a: [1, { b: null }] })).toBe(true);
    expect(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    expect(sameJson([1], { 0: 1 })).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: 1 })).toBe(false);
    expect(sameJson('1', 1)).toBe(false);
  });
});
