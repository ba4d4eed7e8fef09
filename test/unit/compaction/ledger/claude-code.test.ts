import { describe, expect, it } from 'vitest';

import { extractLedger } from '../../../../src/compaction/ledger/index.js';
import { conversation } from '../../../fixtures/builders.js';

/** Claude Code's tools as its sessions record them (inputs and result texts from real sessions). */

const ROOT = '/home/u/proj';

describe('extractLedger: Claude Code tools', () => {
  it('records reads, writes, edits and notebook edits with their gists', () => {
    const messages = conversation()
      .user('Fix the parser.')
      .exchange('r1', 'Read', { file_path: `${ROOT}/src/parse.ts` }, '     1→export function parse() {}')
      .exchange(
        'w1',
        'Write',
        { file_path: `${ROOT}/src/new.ts`, content: 'x'.repeat(120) },
        `File created successfully at: ${ROOT}/src/new.ts`,
      )
      .exchange(
        'w2',
        'Write',
        { file_path: `${ROOT}/src/old.ts`, content: 'y'.repeat(30) },
        `The file ${ROOT}/src/old.ts has been updated. Here's the result of running \`cat -n\``,
      )
      .exchange(
        'e1',
        'Edit',
        { file_path: `${ROOT}/src/parse.ts`, old_string: 'a'.repeat(120), new_string: 'b'.repeat(180) },
        `The file ${ROOT}/src/parse.ts has been updated successfully.`,
      )
      .exchange(
        'm1',
        'MultiEdit',
        {
          file_path: `${ROOT}/src/parse.ts`,
          edits: [
            { old_string: 'abc', new_string: 'abcd' },
            { old_string: 'x', new_string: '' },
          ],
        },
        'Applied 2 edits',
      )
      .exchange('n1', 'NotebookEdit', { notebook_path: `${ROOT}/nb.ipynb`, new_source: 'print(1)', edit_mode: 'insert' }, 'Inserted cell')
      .build();
    const files = Object.fromEntries(extractLedger(messages).files.map((f) => [f.path, f]));
    expect(files[`${ROOT}/src/parse.ts`]).toMatchObject({
      actions: { read: 1, edited: 2 },
      gist: '2 edits: 4 → 4 chars',
      lastChange: 'edited',
      lastSeq: 10,
      changedSeq: 10,
    });
    expect(files[`${ROOT}/src/new.ts`]).toMatchObject({ actions: { created: 1 }, gist: 'wrote 120 chars' });
    expect(files[`${ROOT}/src/old.ts`]).toMatchObject({ actions: { edited: 1 }, gist: 'wrote 30 chars' });
    expect(files[`${ROOT}/nb.ipynb`]).toMatchObject({ actions: { edited: 1 }, gist: 'cell insert: 8 chars' });
  });

  it('keeps the gist of the latest change, old → new sizes of an Edit', () => {
    const messages = conversation()
      .exchange(
        'e1',
        'Edit',
        { file_path: 'a.ts', old_string: 'x'.repeat(120), new_string: 'y'.repeat(180) },
        'The file a.ts has been updated successfully.',
      )
      .exchange('r1', 'Read', { file_path: 'a.ts' }, '1→y')
      .build();
    expect(extractLedger(messages).files).toEqual([
      { path: 'a.ts', actions: { edited: 1, read: 1 }, lastSeq: 3, changedSeq: 1, lastChange: 'edited', gist: '120 → 180 chars' },
    ]);
  });

  it('records commands with their exit code and the error line, never a bare "Exit code N"', () => {
    const output = [
      'Exit code 2',
      'Compiling 4 files (.ex)',
      '  1) test mount renders (MyTest)',
      '     ** (RuntimeError) no :secret_key_base configuration found',
      '  2 tests, 1 failure',
    ].join('\n');
    const messages = conversation()
      .exchange('b1', 'Bash', { command: 'mix test test/my_test.exs', description: 'Run tests' }, output, true)
      .exchange('b2', 'Bash', { command: 'git push' }, 'Exit code 128\nfatal: The current branch x has no upstream branch.', true)
      .exchange('b3', 'Bash', { command: 'ls' }, 'a\nb')
      .build();
    const ledger = extractLedger(messages);
    expect(ledger.commands.map((c) => [c.line, c.outcome, c.exitCode])).toEqual([
      ['mix test test/my_test.exs', 'failed', 2],
      ['git push', 'failed', 128],
      ['ls', 'ok', undefined],
    ]);
    expect(ledger.errors.map((e) => [e.line, e.tool, e.targetKind, e.target, e.resolved])).toEqual([
      ['** (RuntimeError) no :secret_key_base configuration found', 'Bash', 'command', 'mix test test/my_test.exs', false],
      ['fatal: The current branch x has no upstream branch.', 'Bash', 'command', 'git push', false],
    ]);
  });

  it('resolves an error when the same command later succeeds, and only then', () => {
    const messages = conversation()
      .exchange('b1', 'Bash', { command: 'npm test' }, 'Exit code 1\nError: expected 2, got 3', true)
      .exchange('b2', 'Bash', { command: 'npm run build' }, 'Exit code 1\nerror TS2322: bad type', true)
      .exchange('b3', 'Bash', { command: 'npm test' }, 'all 12 passed')
      .build();
    const ledger = extractLedger(messages);
    expect(ledger.errors.map((e) => [e.target, e.resolved])).toEqual([
      ['npm test', true],
      ['npm run build', false],
    ]);
    expect(ledger.commands.find((c) => c.line === 'npm test')).toMatchObject({ outcome: 'ok', count: 2, lastSeq: 5, lastOkSeq: 5 });
  });

  it('reads a tool error (tool_use_error) as the error of that tool on that file, resolved by a later success of the same tool there', () => {
    const messages = conversation()
      .exchange(
        'e1',
        'Edit',
        { file_path: 'lib/otel.ex', old_string: 'a', new_string: 'b' },
        '<tool_use_error>String to replace not found in file.\nString: a</tool_use_error>',
        true,
      )
      .exchange(
        'e2',
        'Edit',
        { file_path: 'lib/other.ex', old_string: 'a', new_string: 'b' },
        'The file lib/other.ex has been updated successfully.',
      )
      .exchange(
        'e3',
        'Edit',
        { file_path: 'lib/otel.ex', old_string: 'c', new_string: 'd' },
        'The file lib/otel.ex has been updated successfully.',
      )
      .build();
    const ledger = extractLedger(messages);
    expect(ledger.errors).toEqual([
      { line: 'String to replace not found in file.', tool: 'Edit', targetKind: 'path', target: 'lib/otel.ex', seq: 1, resolved: true },
    ]);
    // the failed edit changed nothing
    expect(ledger.files.find((f) => f.path === 'lib/otel.ex')?.actions).toEqual({ edited: 1 });
  });

  it('leaves a call the user declined out of the ledger', () => {
    const declined =
      "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file).";
    const messages = conversation()
      .exchange('e1', 'Edit', { file_path: 'a.ts', old_string: 'a', new_string: 'b' }, declined, true)
      .exchange('b1', 'Bash', { command: 'rm -rf build' }, declined, true)
      .build();
    const ledger = extractLedger(messages);
    expect(ledger.files).toEqual([]);
    expect(ledger.commands).toEqual([]);
    expect(ledger.errors).toEqual([]);
  });

  it('reads the files a Bash command changes (rm, mv, sed -i, redirects)', () => {
    const messages = conversation()
      .exchange('b1', 'Bash', { command: "sed -i 's/a/b/' src/x.py && mv old.txt new.txt && rm tmp.log && echo hi > out.txt" }, '')
      .build();
    const files = Object.fromEntries(extractLedger(messages).files.map((f) => [f.path, f]));
    expect(files['src/x.py']?.actions).toEqual({ edited: 1 });
    expect(files['old.txt']).toMatchObject({ actions: { moved: 1 }, movedTo: 'new.txt', lastChange: 'moved' });
    expect(files['new.txt']?.actions).toEqual({ created: 1 });
    expect(files['tmp.log']).toMatchObject({ actions: { deleted: 1 }, lastChange: 'deleted' });
    expect(files['out.txt']?.actions).toEqual({ created: 1 });
  });

  it('keeps the latest TodoWrite list; Glob and Grep read no file', () => {
    const messages = conversation()
      .exchange(
        't1',
        'TodoWrite',
        { todos: [{ content: 'Write the parser', status: 'pending', activeForm: 'Writing' }] },
        'Todos have been modified successfully.',
      )
      .exchange('g1', 'Grep', { pattern: 'parse', path: 'src/index.ts' }, 'src/index.ts:3')
      .exchange('g2', 'Glob', { pattern: '**/*.ts' }, 'src/a.ts')
      .exchange(
        't2',
        'TodoWrite',
        {
          todos: [
            { content: 'Write the parser', status: 'completed', activeForm: 'Writing' },
            { content: 'Test the parser', status: 'in_progress', activeForm: 'Testing' },
          ],
        },
        'Todos have been modified successfully.',
      )
      .build();
    const ledger = extractLedger(messages);
    expect(ledger.files).toEqual([]);
    expect(ledger.tasks).toEqual({
      seq: 7,
      items: [
        { text: 'Write the parser', status: 'completed' },
        { text: 'Test the parser', status: 'in_progress' },
      ],
    });
  });
});
