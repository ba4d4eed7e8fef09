import { describe, expect, it } from 'vitest';

import { parseYamlSubset } from './yaml-subset.js';

describe('parseYamlSubset', () => {
  it('reads block mappings, sequences, flow sequences and scalars', () => {
    const source = [
      '# a comment',
      'name: demo',
      'top:',
      '  count: 2',
      '  ratio: 0.5',
      '  on: true',
      '  empty:',
      '  quoted: "a: b # not a comment"',
      "  single: 'it''s'",
      '  url: postgres://u:p@h:5432/db  # trailing comment',
      '  list:',
      '    - one',
      '    - "two"',
      '    - key: value',
      '      other: 3',
      '    -',
      '      nested: yes',
      '  flow: ["CMD", "redis-cli", ping]',
      '  interp: ${VAR:-default}',
    ].join('\n');
    expect(parseYamlSubset(source)).toEqual({
      name: 'demo',
      top: {
        count: 2,
        ratio: 0.5,
        on: true,
        empty: null,
        quoted: 'a: b # not a comment',
        single: "it's",
        url: 'postgres://u:p@h:5432/db',
        list: ['one', 'two', { key: 'value', other: 3 }, { nested: 'yes' }],
        flow: ['CMD', 'redis-cli', 'ping'],
        interp: '${VAR:-default}',
      },
    });
  });

  it.each([
    ['anchors', 'a: &x 1'],
    ['aliases', 'a: *x'],
    ['tags', 'a: !!str 1'],
    ['block scalars', 'a: |\n  text'],
    ['flow mappings', 'a: {b: 1}'],
    ['nested flow', 'a: [[1]]'],
    ['documents', '---\na: 1'],
    ['duplicate keys', 'a: 1\na: 2'],
    ['bad indentation', 'a:\n    b: 1\n  c: 2'],
    ['tabs', 'a:\n\tb: 1'],
    ['unterminated strings', 'a: "open'],
    ['ambiguous plain scalars', 'a: b: c'],
  ])('rejects %s', (_what, source) => {
    expect(() => parseYamlSubset(source)).toThrow(/line \d+/);
  });
});
