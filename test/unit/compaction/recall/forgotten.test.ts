import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { LedgerName } from '../../../../src/compaction/ledger/index.js';
import { extractLedger } from '../../../../src/compaction/ledger/index.js';
import { countForgotten, heldForms, namesMissingFrom, spanNames } from '../../../../src/compaction/recall/forgotten.js';
import { normalizeSpace } from '../../../../src/compaction/summarize/index.js';
import { conversation } from '../../../fixtures/builders.js';

describe('what the context no longer holds (SPEC §5.9)', () => {
  const messages = conversation()
    .user('Fix the failing registry test, and never touch mix.lock.')
    .exchange(
      't1',
      'Edit',
      { file_path: '/repo/lib/app/session_registry.ex', old_string: 'a', new_string: 'bb' },
      'The file has been updated.',
    )
    .exchange('t2', 'Bash', { command: 'mix test test/registry_test.exs' }, '** (KeyError) key :pane_id not found\nExit code 1', true)
    .build();
  const names = spanNames(extractLedger(messages));

  it("names the span's paths, commands and error lines", () => {
    expect(names).toEqual(
      expect.arrayContaining([
        { kind: 'path', name: '/repo/lib/app/session_registry.ex' },
        { kind: 'command', name: 'mix test test/registry_test.exs' },
        expect.objectContaining({ kind: 'error' }),
      ]),
    );
    expect(spanNames(null)).toEqual([]);
  });

  it('holds a path in its whole or cwd-relative form, whitespace aside', () => {
    const path = { kind: 'path' as const, name: '/repo/lib/app/session_registry.ex' };
    expect(heldForms(path, '/repo')).toEqual(['/repo/lib/app/session_registry.ex', 'lib/app/session_registry.ex']);
    expect(namesMissingFrom([path], 'edited lib/app/session_registry.ex twice', '/repo')).toEqual([]);
    expect(namesMissingFrom([path], 'edited session_registry.ex', '/repo')).toEqual([path]);
    const command = { kind: 'command' as const, name: 'mix  test\ttest/registry_test.exs' };
    expect(namesMissingFrom([command], 'ran `mix test test/registry_test.exs`', null)).toEqual([]);
  });

  it('counts by kind', () => {
    expect(countForgotten(names)).toMatchObject({ total: names.length, byKind: { path: 1, command: 1 } });
    expect(countForgotten([])).toEqual({ total: 0, byKind: { path: 0, command: 0, error: 0, id: 0 } });
  });

  it('finds the same names missing as a full scan of the text for each name', () => {
    const word = fc.stringMatching(/^[a-z_./ -]{1,12}$/);
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 80 }), fc.array(word, { maxLength: 30 }), (pieces, absent) => {
        const text = pieces.join(pieces.length % 2 === 0 ? ' ' : '\n  ');
        // names drawn from the text (with its spacing changed) and names that may not be in it
        const taken = pieces.slice(0, 20).map((piece, i): LedgerName => ({ kind: i % 2 === 0 ? 'path' : 'command', name: ` ${piece}\t` }));
        const others = absent.map((name): LedgerName => ({ kind: 'id', name }));
        const names = [...taken, ...others];
        const haystack = normalizeSpace(text);
        const scanned = names.filter((name) => !heldForms(name, '/repo').some((form) => haystack.includes(form)));
        expect(namesMissingFrom(names, text, '/repo')).toEqual(scanned);
      }),
      { numRuns: 200 },
    );
  });
});
