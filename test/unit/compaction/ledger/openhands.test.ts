import { describe, expect, it } from 'vitest';

import { extractLedger } from '../../../../src/compaction/ledger/index.js';
import { conversation } from '../../../fixtures/builders.js';

/** OpenHands tools: execute_bash / run, the str_replace_editor family, read, edit, task_tracker. */

const FILE = '/workspace/tool/config.py';

describe('extractLedger: OpenHands tools', () => {
  it('reads every editor command', () => {
    const messages = conversation()
      .exchange('v1', 'str_replace_editor', { command: 'view', path: FILE }, `Here's the result of running \`cat -n\` on ${FILE}:`)
      .exchange(
        'v2',
        'str_replace_editor',
        { command: 'view', path: '/workspace/tool' },
        "Here's the files and directories up to 2 levels deep in /workspace/tool",
      )
      .exchange(
        'c1',
        'str_replace_editor',
        { command: 'create', path: '/workspace/tool/new.py', file_text: 'x = 1\n' },
        'File created successfully',
      )
      .exchange(
        's1',
        'str_replace_editor',
        { command: 'str_replace', path: FILE, old_str: 'abc', new_str: 'abcdef' },
        `The file ${FILE} has been edited.`,
      )
      .exchange(
        'i1',
        'str_replace_editor',
        { command: 'insert', path: FILE, insert_line: 12, new_str: 'y = 2' },
        `The file ${FILE} has been edited.`,
      )
      .exchange('u1', 'str_replace_editor', { command: 'undo_edit', path: '/workspace/tool/new.py' }, 'Last edit undone')
      .exchange('r1', 'read', { path: '/workspace/tool/README.md' }, '# tool')
      .exchange('e1', 'edit', { path: '/workspace/tool/cli.py', content: 'print(1)', start: 1, end: -1 }, 'edited')
      .build();
    const files = Object.fromEntries(extractLedger(messages).files.map((f) => [f.path, f]));
    expect(Object.keys(files).sort()).toEqual(
      ['/workspace/tool/README.md', '/workspace/tool/cli.py', '/workspace/tool/new.py', FILE].sort(),
    );
    expect(files[FILE]).toMatchObject({ actions: { read: 1, edited: 2 }, gist: 'inserted 5 chars after line 12' });
    expect(files['/workspace/tool/new.py']).toMatchObject({ actions: { created: 1, edited: 1 }, gist: 'undo of the last edit' });
    expect(files['/workspace/tool/cli.py']).toMatchObject({ actions: { edited: 1 }, gist: 'wrote 8 chars' });
  });

  it('reads commands, their exit code trailer, and test failures when no exit code is given', () => {
    const messages = conversation()
      .exchange(
        'b1',
        'execute_bash',
        { command: 'python -m pytest tests -q', is_input: false },
        "F.\nE       KeyError: 'region'\n1 failed, 1 passed in 0.1s",
      )
      .exchange('b2', 'execute_bash', { command: 'make build' }, 'make: *** [all] Error 2\n[The command completed with exit code 2.]')
      .exchange('b3', 'execute_bash', { command: 'C-c', is_input: true }, '^C')
      .exchange(
        'b4',
        'execute_bash',
        { command: 'python -m pytest tests -q' },
        '2 passed in 0.1s\n[The command completed with exit code 0.]',
      )
      .build();
    const ledger = extractLedger(messages);
    expect(ledger.commands.map((c) => [c.line, c.outcome, c.exitCode, c.count])).toEqual([
      ['make build', 'failed', 2, 1],
      ['python -m pytest tests -q', 'ok', 0, 2],
    ]);
    expect(ledger.errors.map((e) => [e.line, e.resolved])).toEqual([
      ["E       KeyError: 'region'", true],
      ['make: *** [all] Error 2', false],
    ]);
  });

  it('joins an error observation\'s bare "ERROR:" heading to its detail', () => {
    const messages = conversation()
      .exchange(
        's1',
        'str_replace_editor',
        { command: 'str_replace', path: FILE, old_str: 'a', new_str: 'b' },
        `ERROR:\nNo replacement was performed, old_str \`a\` did not appear verbatim in ${FILE}.`,
        true,
      )
      .build();
    const ledger = extractLedger(messages);
    expect(ledger.errors.map((e) => e.line)).toEqual([
      `ERROR: No replacement was performed, old_str \`a\` did not appear verbatim in ${FILE}.`,
    ]);
    expect(ledger.files).toEqual([]);
  });

  it('keeps the task_tracker plan', () => {
    const messages = conversation()
      .exchange(
        't1',
        'task_tracker',
        {
          command: 'plan',
          task_list: [
            { id: '1', title: 'Reproduce', status: 'done' },
            { id: '2', title: 'Fix merge', status: 'todo' },
          ],
        },
        'ok',
      )
      .exchange('t2', 'task_tracker', { command: 'view' }, '1. Reproduce')
      .build();
    expect(extractLedger(messages).tasks).toEqual({
      seq: 1,
      items: [
        { text: 'Reproduce', status: 'completed' },
        { text: 'Fix merge', status: 'pending' },
      ],
    });
  });
});
