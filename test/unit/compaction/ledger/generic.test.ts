import { describe, expect, it } from 'vitest';

import { extractLedger } from '../../../../src/compaction/ledger/index.js';
import { conversation } from '../../../fixtures/builders.js';

/** Tools of no known agent: a path field makes a file tool (action from the name), a command field a shell, a status list a todo list. */

describe('extractLedger: generic fallback', () => {
  it.each([
    ['write_file', { filename: 'notes/a.md', text: 'hi' }, 'notes/a.md', { created: 1 }],
    ['replace_in_file', { file: 'src/a.go', find: 'x', replace: 'y' }, 'src/a.go', { edited: 1 }],
    ['delete_file', { path: 'build/out.js' }, 'build/out.js', { deleted: 1 }],
    ['view_source', { target_file: 'lib/x.rb' }, 'lib/x.rb', { read: 1 }],
  ])('%s on a path field', (tool, input, path, actions) => {
    const messages = conversation().exchange('g1', tool, input, 'ok').build();
    expect(extractLedger(messages).files).toMatchObject([{ path, actions }]);
  });

  it('reads a move with its destination', () => {
    const messages = conversation().exchange('g1', 'rename_file', { path: 'a/old.ts', new_path: 'a/new.ts' }, 'renamed').build();
    const files = Object.fromEntries(extractLedger(messages).files.map((f) => [f.path, f]));
    expect(files['a/old.ts']).toMatchObject({ actions: { moved: 1 }, movedTo: 'a/new.ts' });
    expect(files['a/new.ts']).toMatchObject({ actions: { created: 1 } });
  });

  it('a field that holds no path is not a file', () => {
    const messages = conversation().exchange('g1', 'lookup', { file: 'the big one', query: 'x' }, 'nothing').build();
    expect(extractLedger(messages).files).toEqual([]);
  });

  it('reads a command field (string or argv) as a shell', () => {
    const messages = conversation()
      .exchange('g1', 'terminal', { cmd: 'cargo test' }, 'error[E0308]: mismatched types\nexit status 101', true)
      .exchange('g2', 'runner', { script: ['node', 'build.js'] }, 'built')
      .build();
    const ledger = extractLedger(messages);
    expect(ledger.commands.map((c) => [c.line, c.outcome])).toEqual([
      ['cargo test', 'failed'],
      ['node build.js', 'ok'],
    ]);
    expect(ledger.errors.map((e) => [e.line, e.tool])).toEqual([['error[E0308]: mismatched types', 'terminal']]);
  });

  it('an error of a tool with no path or command is about its first short argument, resolved by a later success of that tool on it', () => {
    const messages = conversation()
      .exchange('g1', 'get_reservation_details', { reservation_id: 'ZFA04Y' }, 'Error: reservation not found', true)
      .exchange('g2', 'get_reservation_details', { reservation_id: 'H9ZU1C' }, '{"id":"H9ZU1C"}')
      .build();
    const ledger = extractLedger(messages);
    expect(ledger.errors).toEqual([
      {
        line: 'Error: reservation not found',
        tool: 'get_reservation_details',
        targetKind: 'call',
        target: 'ZFA04Y',
        seq: 1,
        resolved: false,
      },
    ]);
    const again = conversation()
      .exchange('g3', 'get_reservation_details', { reservation_id: 'ZFA04Y' }, '{"id":"ZFA04Y"}')
      .build()
      .map((m) => ({ ...m, seq: m.seq + 10 }));
    expect(extractLedger([...messages, ...again]).errors[0]?.resolved).toBe(true);
  });

  it('reads a list of items with a status as the todo list', () => {
    const messages = conversation()
      .exchange(
        'g1',
        'set_todos',
        {
          items: [
            { text: 'a', status: 'doing' },
            { text: 'b', status: 'open' },
          ],
        },
        'ok',
      )
      .build();
    expect(extractLedger(messages).tasks?.items).toEqual([
      { text: 'a', status: 'in_progress' },
      { text: 'b', status: 'pending' },
    ]);
  });
});
