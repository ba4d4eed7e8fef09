import { describe, expect, it } from 'vitest';

import { loadCorpus } from '../../../eval/corpus.js';
import { errorLineOf } from '../../../eval/probes/failures.js';
import { deriveProbes, type Probe, type ProbeMessage, scoreProbes } from '../../../eval/probes/index.js';
import { shellFileChanges } from '../../../eval/probes/shell.js';
import type { Block, Role } from '../../../src/compaction/types.js';
import { text, toolResult, toolUse } from '../../fixtures/builders.js';

const msg = (role: Role, content: string | Block[]): ProbeMessage => ({
  role,
  content: typeof content === 'string' ? [text(content)] : content,
});

const CWD = '/home/u/app';

/** A Claude Code-like span: a write, an edit, a failing test run, a deletion, a todo list, the user's words. */
const span: ProbeMessage[] = [
  msg('user', 'Add input validation to the login handler. Never commit directly to main.'),
  msg('assistant', [toolUse('t1', 'Write', { file_path: `${CWD}/src/validate.ts`, content: 'export {}' })]),
  msg('user', [toolResult('t1', 'File created successfully at: /home/u/app/src/validate.ts')]),
  msg('assistant', [toolUse('t2', 'Edit', { file_path: `${CWD}/src/login.ts`, old_string: 'a', new_string: 'b' })]),
  msg('user', [toolResult('t2', 'The file has been updated.')]),
  msg('assistant', [toolUse('t3', 'Bash', { command: 'npm test -- login\necho done' })]),
  msg('user', [
    toolResult(
      't3',
      "Exit code 1\n FAIL test/login.test.ts\nTypeError: Cannot read properties of undefined (reading 'user')\n    at login (src/login.ts:3:9)",
      true,
    ),
  ]),
  msg('assistant', [toolUse('t4', 'Bash', { command: 'rm old/legacy.ts && git mv src/a.ts src/b.ts' })]),
  msg('user', [toolResult('t4', '')]),
  msg('assistant', [
    toolUse('t5', 'TodoWrite', {
      todos: [
        { content: 'Write the validator', status: 'completed' },
        { content: 'Fix the failing login test', status: 'in_progress' },
      ],
    }),
  ]),
  msg('user', [toolResult('t5', 'Todos have been modified successfully.')]),
  msg('user', 'Please make sure the error message stays readable.'),
];

const byKind = (probes: readonly Probe[], kind: Probe['kind']) => probes.filter((p) => p.kind === kind);

describe('deriveProbes', () => {
  const probes = deriveProbes(span, { cwd: CWD });

  it('lists each changed file with the action that describes where it ended', () => {
    expect(byKind(probes, 'file').map((p) => [p.text, p.kind === 'file' ? p.action : null])).toEqual([
      [`${CWD}/src/validate.ts`, 'created'],
      [`${CWD}/src/login.ts`, 'edited'],
      ['old/legacy.ts', 'deleted'],
      ['src/a.ts', 'moved'],
    ]);
    const login = probes.find((p) => p.text === `${CWD}/src/login.ts`);
    expect(login?.kind === 'file' && login.names).toEqual([`${CWD}/src/login.ts`, 'src/login.ts', 'login.ts']);
  });

  it('takes the line that reads as the error and the failing command, never the exit code', () => {
    expect(byKind(probes, 'error').map((p) => p.text)).toEqual(["TypeError: Cannot read properties of undefined (reading 'user')"]);
    expect(byKind(probes, 'command').map((p) => p.text)).toEqual(['npm test -- login']);
  });

  it('asks for the last commands run, however they ended, oldest first', () => {
    expect(byKind(probes, 'recent-command').map((p) => p.text)).toEqual([
      'npm test -- login',
      'rm old/legacy.ts && git mv src/a.ts src/b.ts',
    ]);
  });

  it('keeps the user constraints verbatim, the latest requests and the open tasks', () => {
    expect(byKind(probes, 'constraint').map((p) => p.text)).toEqual([
      'Never commit directly to main.',
      'Please make sure the error message stays readable.',
    ]);
    expect(byKind(probes, 'request').map((p) => p.text)).toEqual([
      'Add input validation to the login handler.',
      'Please make sure the error message stays readable.',
    ]);
    expect(byKind(probes, 'task').map((p) => p.text)).toEqual(['Fix the failing login test']);
  });

  it('reads a mini-swe-agent span: fenced shell blocks answered by <returncode> observations', () => {
    const swe = deriveProbes(
      [
        msg('assistant', "THOUGHT: fix it\n\n```bash\nsed -i 's/a/b/' src/x.py && python repro.py\n```"),
        msg(
          'user',
          '<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n  File "repro.py", line 1\nValueError: bad value\n</output>',
        ),
        msg('assistant', "THOUGHT: write a test\n\n```bash\ncat <<'EOF' > tests/test_x.py\nrm -rf /\nEOF\n```"),
        msg('user', '<returncode>0</returncode>\n<output>\n</output>'),
      ],
      { cwd: '/testbed' },
    );
    expect(swe.map((p) => `${p.kind}:${p.text}${p.kind === 'file' ? `:${p.action}` : ''}`)).toEqual([
      'file:src/x.py:edited',
      'file:tests/test_x.py:created',
      'error:ValueError: bad value',
      "command:sed -i 's/a/b/' src/x.py && python repro.py",
      "recent-command:sed -i 's/a/b/' src/x.py && python repro.py",
      "recent-command:cat <<'EOF' > tests/test_x.py",
    ]);
  });
});

describe('shellFileChanges', () => {
  it.each([
    [
      'rm -f a.txt b.txt',
      [
        ['a.txt', 'deleted'],
        ['b.txt', 'deleted'],
      ],
    ],
    ['mv src/a.ts src/b.ts', [['src/a.ts', 'moved']]],
    ['echo hi > out.txt 2>/dev/null', [['out.txt', 'written']]],
    ['echo hi >> log.txt', [['log.txt', 'edited']]],
    [
      "sed -i 's/x/y/' a.py b.py",
      [
        ['a.py', 'edited'],
        ['b.py', 'edited'],
      ],
    ],
    ["grep -n 'rm x' file.py", []],
    ['cat file.py | head', []],
  ])('%s', (command, expected) => {
    expect(shellFileChanges(command).map((c) => [c.path, c.action])).toEqual(expected);
  });
});

describe('errorLineOf', () => {
  it.each([
    ['Exit code 1\nfatal: not a git repository', 'fatal: not a git repository'],
    ['Exit code 2\n     ** (CompileError) lib/a.ex:3: undefined function foo/0', '** (CompileError) lib/a.ex:3: undefined function foo/0'],
    ['Exit code 1', null],
    ['Error: Reservation not found', 'Error: Reservation not found'],
  ])('%j', (output, line) => {
    expect(errorLineOf(output)).toBe(line);
  });
});

describe('scoreProbes', () => {
  const probes = deriveProbes(span, { cwd: CWD });

  it('answers a file by its relative path or file name with the action word nearby or in its heading', () => {
    const file = probes.filter((p) => p.text === `${CWD}/src/login.ts`);
    expect(scoreProbes(file, 'Edited `src/login.ts` to validate the body.').answered).toBe(1);
    expect(scoreProbes(file, '## Files modified\n- login.ts: validation').answered).toBe(1);
    // named but not what happened to it
    expect(scoreProbes(file, 'Read src/login.ts to understand it.').answered).toBe(0);
    // a longer name is another file
    expect(scoreProbes(file, 'Edited src/login.tsx').answered).toBe(0);
  });

  it('needs errors and commands verbatim (whitespace aside) and prose contained (case and markdown aside)', () => {
    const context = [
      "TypeError: Cannot read properties\n  of undefined (reading 'user')",
      '`npm test -- login` failed',
      '`rm old/legacy.ts && git mv src/a.ts src/b.ts` ran',
      'User: **never commit directly to main.** Please make sure the error message stays readable.',
      'Add input validation to the login handler.',
    ].join('\n');
    const score = scoreProbes(
      probes.filter((p) => p.kind !== 'file' && p.kind !== 'task'),
      context,
    );
    expect(score.missed).toEqual([]);
    expect(score.score).toBe(1);
  });

  it('lists every miss and counts per kind', () => {
    const score = scoreProbes(probes, 'nothing useful');
    expect(score.answered).toBe(0);
    expect(score.missed).toHaveLength(probes.length);
    expect(score.byKind.file).toEqual({ answered: 0, total: 4 });
    expect(scoreProbes([], 'x').score).toBeNull();
  });
});

describe('probes of the real sessions', () => {
  const cases = loadCorpus({});

  it.each(cases.filter((c) => c.collection !== 'tau-bench').map((c) => [c.id, c] as const))(
    '%s: files changed, no exit-code error probes',
    (_id, c) => {
      const probes = deriveProbes(c.messages, { cwd: c.cwd });
      expect(byKind(probes, 'file').length).toBeGreaterThan(0);
      expect(byKind(probes, 'request').length).toBeGreaterThan(0);
      for (const p of byKind(probes, 'error')) expect(p.text).not.toMatch(/^(Exit code|<returncode>)/);
    },
  );

  it('every τ-bench conversation has probes', () => {
    for (const c of cases.filter((x) => x.collection === 'tau-bench'))
      expect(deriveProbes(c.messages, { cwd: c.cwd }).length, c.id).toBeGreaterThan(0);
  });

  it('a Claude Code session answers its own probes (the transcript is the whole context)', () => {
    const c = cases.find((x) => x.collection === 'claude-code')!;
    const whole = c.messages
      .map((m) =>
        m.content
          .map((b) =>
            b.type === 'text'
              ? b.text
              : b.type === 'tool_result'
                ? typeof b.content === 'string'
                  ? b.content
                  : ''
                : b.type === 'tool_use'
                  ? JSON.stringify(b.input)
                  : '',
          )
          .join('\n'),
      )
      .join('\n');
    const probes = deriveProbes(c.messages, { cwd: c.cwd }).filter((p) => p.kind !== 'file');
    expect(scoreProbes(probes, whole).missed).toEqual([]);
  });
});

describe('what does not count as a change or a failure', () => {
  it('a search that found nothing (exit status 1 of grep and the like) is not a failing command', () => {
    const probes = deriveProbes(
      [
        msg('user', 'Find where the limit is read.'),
        msg('assistant', [toolUse('g1', 'Bash', { command: 'grep -rn "max_limit" src' })]),
        msg('user', [toolResult('g1', 'Exit code 1', true)]),
        msg('assistant', [toolUse('g2', 'Bash', { command: 'cat src/missing.ts | grep limit' })]),
        msg('user', [toolResult('g2', 'cat: src/missing.ts: No such file or directory\nExit code 1', true)]),
        msg('assistant', [toolUse('g3', 'Bash', { command: 'npm test' })]),
        msg('user', [toolResult('g3', 'Error: 2 tests failed\nExit code 2', true)]),
      ],
      { cwd: CWD },
    );
    // the pipeline ending in grep answered "no match" both times; only the test run failed
    expect(byKind(probes, 'command').map((p) => p.text)).toEqual(['npm test']);
  });

  it('the words of a mis-quoted in-place script that the shell found no file for were not edited', () => {
    const probes = deriveProbes(
      [
        msg('user', 'Fix the parser.'),
        // bash ends a single-quoted string at \' : the script falls apart into words sed takes for files
        msg('assistant', [
          toolUse('s1', 'Bash', { command: "sed -i '3c\\    parts = auth.split(\\':\\', 1)\\n    return (\\'\\', \\'\\')' src/parse.py" }),
        ]),
        msg('user', [toolResult('s1', "sed: can't read return: No such file or directory\nExit code 2", true)]),
      ],
      { cwd: CWD },
    );
    expect(
      shellFileChanges("sed -i '3c\\    parts = auth.split(\\':\\', 1)\\n    return (\\'\\', \\'\\')' src/parse.py").map((c) => c.path),
    ).toContain('return');
    expect(byKind(probes, 'file').map((p) => p.text)).not.toContain('return');
  });
});

describe('fenced actions (mini-swe-agent)', () => {
  it('a turn with two fenced blocks is refused by the harness: neither ran', () => {
    const probes = deriveProbes(
      [
        msg('user', 'Fix the parser in src/parse.py.'),
        msg('assistant', "Two steps:\n```bash\nsed -i 's/a/b/' src/parse.py\n```\nthen\n```bash\nrm src/old.py\n```"),
        msg('user', 'Please always provide EXACTLY ONE action in triple backticks, found 2 actions.'),
        msg('assistant', "```bash\nsed -i 's/x/y/' src/lexer.py\n```"),
        msg('user', '<returncode>0</returncode>\n<output>\n</output>'),
      ],
      { cwd: '/testbed' },
    );
    expect(byKind(probes, 'file').map((p) => p.text)).toEqual(['src/lexer.py']);
  });
});

describe('a command line the shell could not parse', () => {
  it('changed no file', () => {
    const probes = deriveProbes(
      [
        msg('user', 'Fix the docstring.'),
        msg('assistant', "```bash\nsed -i '3c\\    # Don\\'t show it' src/doc.py\n```"),
        msg('user', "<returncode>2</returncode>\n<output>\nbash: -c: line 1: syntax error near unexpected token `('\n</output>"),
      ],
      { cwd: '/testbed' },
    );
    expect(byKind(probes, 'file')).toEqual([]);
  });
});
