import { describe, expect, it } from 'vitest';

import {
  commonDirectory,
  extractLedger,
  findSessionCwd,
  guessCwd,
  ledgerCounts,
  ledgerNames,
  majorityDirectory,
  relativeTo,
} from '../../../../src/compaction/ledger/index.js';
import { conversation } from '../../../fixtures/builders.js';

describe('ledgerCounts and ledgerNames', () => {
  const messages = conversation()
    .user('Rename order A7XK2P9 by 2026-03-01. It must never drop A7XK2P9.')
    .exchange('r1', 'Read', { file_path: '/repo/a.ts' }, '1→a')
    .exchange(
      'e1',
      'Edit',
      { file_path: '/repo/b.ts', old_string: 'a', new_string: 'b' },
      'The file /repo/b.ts has been updated successfully.',
    )
    .exchange('b1', 'Bash', { command: 'mv /repo/c.ts /repo/d.ts' }, '')
    .exchange('b2', 'Bash', { command: 'npm test' }, 'Exit code 1\nError: boom', true)
    .exchange('b3', 'Bash', { command: 'npm run lint' }, 'Exit code 1\nerror: lint', true)
    .exchange('b4', 'Bash', { command: 'npm run lint' }, 'clean')
    .exchange(
      't1',
      'TodoWrite',
      {
        todos: [
          { content: 'ship v2', status: 'completed' },
          { content: 'tag release', status: 'pending' },
        ],
      },
      'ok',
    )
    .build();
  const ledger = extractLedger(messages);

  it('counts what the ledger holds', () => {
    expect(ledgerCounts(ledger)).toEqual({
      files: 4,
      filesChanged: 3,
      commands: 3,
      commandsFailed: 1,
      errorsOpen: 1,
      errorsResolved: 1,
      constraints: 1,
      requests: 1,
      openTasks: 1,
    });
  });

  it('names its paths, commands, error lines and ids, once each', () => {
    const names = ledgerNames(ledger);
    expect(
      names
        .filter((n) => n.kind === 'path')
        .map((n) => n.name)
        .sort(),
    ).toEqual(['/repo/a.ts', '/repo/b.ts', '/repo/c.ts', '/repo/d.ts']);
    expect(names.filter((n) => n.kind === 'command').map((n) => n.name)).toEqual(['mv /repo/c.ts /repo/d.ts', 'npm test', 'npm run lint']);
    expect(names.filter((n) => n.kind === 'error').map((n) => n.name)).toEqual(['Error: boom', 'error: lint']);
    expect(names.filter((n) => n.kind === 'id').map((n) => n.name)).toEqual(['A7XK2P9', '2026-03-01']);
  });
});

describe('paths', () => {
  it.each([
    ['/repo', '/repo/src/a.ts', 'src/a.ts'],
    ['/repo/', '/repo/src/a.ts', 'src/a.ts'],
    ['/repo', '/repo', '.'],
    ['/repo', '/repository/a.ts', '/repository/a.ts'],
    ['/repo', 'src/a.ts', 'src/a.ts'],
    [undefined, '/repo/a.ts', '/repo/a.ts'],
  ])('relativeTo(%s, %s) = %s', (cwd, path, expected) => {
    expect(relativeTo(cwd, path)).toBe(expected);
  });

  it('finds the working directory a session states', () => {
    expect(findSessionCwd(conversation().system('Env:\nWorking directory: /home/u/proj\nPlatform: linux').build())).toBe('/home/u/proj');
    expect(findSessionCwd(conversation().user('<uploaded_files>\n/workspace/acme__confkit__2.4\n</uploaded_files>\nFix it.').build())).toBe(
      '/workspace/acme__confkit__2.4',
    );
    expect(
      findSessionCwd(
        conversation()
          .user('- MODIFY: Regular source code files in /testbed (this is the working directory for all your subsequent commands)')
          .build(),
      ),
    ).toBe('/testbed');
    expect(findSessionCwd(conversation().user('Fix it.').build())).toBeNull();
  });

  it('guesses it from the files the work changed', () => {
    expect(commonDirectory(['/a/b/c.ts', '/a/b/d/e.ts'])).toBe('/a/b');
    expect(commonDirectory(['/a/x.ts', '/b/y.ts'])).toBeNull();
    const messages = conversation()
      .exchange('r1', 'Read', { file_path: '/tmp/log.txt' }, 'x')
      .exchange('e1', 'Edit', { file_path: '/home/u/p/src/a.ts', old_string: 'a', new_string: 'b' }, 'ok')
      .exchange('e2', 'Edit', { file_path: '/home/u/p/test/a.test.ts', old_string: 'a', new_string: 'b' }, 'ok')
      .build();
    expect(guessCwd(extractLedger(messages))).toBe('/home/u/p');
  });

  it('takes the directory most changed files share: one file written elsewhere does not pull it up', () => {
    expect(majorityDirectory(['/home/u/p/lib/a.ex', '/home/u/p/lib/b.ex', '/home/u/p/test/a.exs', '/home/u/.claude/plan.md'])).toBe(
      '/home/u/p',
    );
    expect(majorityDirectory(['/home/u/p/lib/a.ex', '/home/u/p/lib/b.ex', '/home/u/p/lib/c.ex', '/home/u/p/test/a.exs'])).toBe(
      '/home/u/p/lib',
    );
    expect(majorityDirectory(['/a/x.ts', '/b/y.ts'])).toBeNull();
    expect(majorityDirectory(['/a/b/x.ts'])).toBe('/a/b');
  });
});
