import { describe, expect, it } from 'vitest';

import { extractLedger } from '../../../../src/compaction/ledger/index.js';
import { conversation } from '../../../fixtures/builders.js';

/** OpenAI/Codex tools: `shell` with an argv array, `apply_patch`, `update_plan`; results in role 'tool' messages. */

const PATCH = [
  '*** Begin Patch',
  '*** Update File: src/app.py',
  '@@ def main():',
  '-    print("hi")',
  '+    print("hello")',
  '+    return 0',
  '*** Add File: src/util.py',
  '+def helper():',
  '+    pass',
  '*** Delete File: src/legacy.py',
  '*** Update File: src/a.py',
  '*** Move to: src/b.py',
  '-x = 1',
  '+x = 2',
  '*** End Patch',
].join('\n');

function codex() {
  return conversation().user('Make the app say hello.');
}

describe('extractLedger: OpenAI/Codex tools', () => {
  it('reads a shell argv (bash -lc script) with its exit code from the JSON output', () => {
    const messages = codex()
      .calls([{ id: 'c1', name: 'shell', input: { command: ['bash', '-lc', 'pytest -q tests/test_app.py'], workdir: '/repo' } }])
      .results(
        [
          {
            id: 'c1',
            output: JSON.stringify({
              output: 'F\nE   AssertionError: assert 1 == 0\n1 failed in 0.1s',
              metadata: { exit_code: 1, duration_seconds: 0.2 },
            }),
          },
        ],
        'tool',
      )
      .calls([{ id: 'c2', name: 'shell', input: { command: ['ls', '-la', 'my dir'] } }])
      .results([{ id: 'c2', output: 'Exit code: 0\nWall time: 0.1 seconds\nOutput:\ntotal 0' }], 'tool')
      .build();
    const ledger = extractLedger(messages);
    expect(ledger.commands.map((c) => [c.line, c.outcome, c.exitCode])).toEqual([
      ['pytest -q tests/test_app.py', 'failed', 1],
      ["ls -la 'my dir'", 'ok', 0],
    ]);
    expect(ledger.errors.map((e) => e.line)).toEqual(['E   AssertionError: assert 1 == 0']);
  });

  it('reads every file of an apply_patch envelope, as a tool or run through the shell', () => {
    for (const call of [
      { id: 'p1', name: 'apply_patch', input: { input: PATCH } },
      { id: 'p1', name: 'shell', input: { command: ['apply_patch', PATCH] } },
    ]) {
      const messages = codex()
        .calls([call])
        .results([{ id: 'p1', output: 'Done!' }], 'tool')
        .build();
      const files = Object.fromEntries(extractLedger(messages).files.map((f) => [f.path, f]));
      expect(files['src/app.py']).toMatchObject({ actions: { edited: 1 }, gist: '+2 −1 lines' });
      expect(files['src/util.py']).toMatchObject({ actions: { created: 1 }, gist: '+2 lines' });
      expect(files['src/legacy.py']).toMatchObject({ actions: { deleted: 1 }, lastChange: 'deleted' });
      expect(files['src/a.py']).toMatchObject({ actions: { moved: 1 }, movedTo: 'src/b.py' });
      expect(files['src/b.py']).toMatchObject({ actions: { edited: 1 }, gist: '+1 −1 lines, moved from src/a.py' });
      expect(extractLedger(messages).commands).toEqual([]);
    }
  });

  it('a patch that failed to apply changes no file and is an error of apply_patch on its first file', () => {
    const messages = codex()
      .calls([{ id: 'p1', name: 'apply_patch', input: { input: PATCH } }])
      .results([{ id: 'p1', output: 'error: patch failed: src/app.py:1\nInvalid context', isError: true }], 'tool')
      .build();
    const ledger = extractLedger(messages);
    expect(ledger.files).toEqual([]);
    expect(ledger.errors).toMatchObject([
      { line: 'error: patch failed: src/app.py:1', tool: 'apply_patch', targetKind: 'path', target: 'src/app.py', resolved: false },
    ]);
  });

  it('keeps the plan of update_plan as the todo list', () => {
    const messages = codex()
      .exchange(
        'u1',
        'update_plan',
        {
          explanation: 'x',
          plan: [
            { step: 'Read the code', status: 'completed' },
            { step: 'Patch main', status: 'in_progress' },
            { step: 'Run tests', status: 'pending' },
          ],
        },
        'Plan updated',
      )
      .build();
    expect(extractLedger(messages).tasks?.items).toEqual([
      { text: 'Read the code', status: 'completed' },
      { text: 'Patch main', status: 'in_progress' },
      { text: 'Run tests', status: 'pending' },
    ]);
  });
});
