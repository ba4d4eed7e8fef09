import { describe, expect, it } from 'vitest';

import { toolFailure } from '../../../../src/compaction/local/local-failures.js';
import { parseSections, summarizeLocally } from '../../../../src/compaction/local/local-summarizer.js';
import { buildSummarizeRequest } from '../../../../src/compaction/summarize/prompt.js';
import { mergePolicy } from '../../../../src/config/policy.js';
import { conversation, countTokens } from '../../../fixtures/builders.js';

const tap = (last: string) =>
  [...Array.from({ length: 5 }, (_, k) => `  ok ${k + 1} src/a.test.ts > case ${k + 1} (3 ms)`), last].join('\n');

describe('toolFailure', () => {
  it.each([
    // [what, output, is_error, the failure line or null]
    [
      'a TAP failure at the end of passing lines',
      tap('  not ok 31 TypeError: Cannot read properties of undefined'),
      false,
      'not ok 31 TypeError: Cannot read properties of undefined',
    ],
    ['a TAP failure without an error type', tap('not ok 6 - should be equal'), false, 'not ok 6 - should be equal'],
    ['a TAP todo (not a failure)', tap('not ok 6 - flaky # TODO fix later'), false, null],
    ['all TAP lines passing', tap('ok 6 src/a.test.ts > case 6'), false, null],
    [
      'a vitest/jest FAIL line',
      ' RUN  v3\n FAIL  src/auth/login.test.ts > logs in\nAssertionError: expected 500 to be 200',
      false,
      'FAIL  src/auth/login.test.ts > logs in',
    ],
    [
      'a vitest summary with failures',
      ' Test Files  1 failed | 3 passed (4)\n      Tests  2 failed | 40 passed (42)',
      false,
      'Test Files  1 failed | 3 passed (4)',
    ],
    ['a vitest summary without failures', ' Test Files  4 passed (4)\n      Tests  42 passed (42)', false, null],
    [
      'a pytest FAILED line',
      'tests/test_api.py::test_login FAILED\nFAILED tests/test_api.py::test_login - KeyError: user',
      false,
      'FAILED tests/test_api.py::test_login - KeyError: user',
    ],
    [
      'a pytest summary bar',
      '...F.\n========== 1 failed, 4 passed in 0.31s ==========',
      false,
      '========== 1 failed, 4 passed in 0.31s ==========',
    ],
    ['a go test failure', '=== RUN   TestParse\n--- FAIL: TestParse (0.00s)\nFAIL', false, '--- FAIL: TestParse (0.00s)'],
    ['a mocha failure count', '  12 passing (40ms)\n  1 failing', false, '1 failing'],
    [
      'a Python traceback at the end',
      'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n    main()\nValueError: bad input',
      false,
      'ValueError: bad input',
    ],
    ['an Error: line at the end', "building…\nError: Cannot find module './config'", false, "Error: Cannot find module './config'"],
    ['an error line early, output going on fine', 'Error: retrying once\nconnected\nall good\ndone\nbye', false, null],
    ['a non-zero exit code in the text', 'compiling\nProcess exited with code 2', false, 'Process exited with code 2'],
    [
      'mini-swe-agent’s return code',
      '<returncode>1</returncode>\n<output>\ngrep: x: No such file\n</output>',
      false,
      '<returncode>1</returncode>',
    ],
    [
      'prose about exit codes (docs a fetch returned)',
      '## Hooks\n5. Exit code 2 shows stderr to the user but does not block the session\nMore text',
      false,
      null,
    ],
    ['a zero exit code', '<returncode>0</returncode>\n<output>\nfine\n</output>', false, null],
    ['Claude Code’s own exit code line', 'Exit code 1\nnpm ERR! missing script: lint', true, 'Exit code 1'],
    [
      'is_error with an error line',
      'permission check\nPermissionError: [Errno 13] denied\ncleanup',
      true,
      'PermissionError: [Errno 13] denied',
    ],
    [
      'is_error with only plain text',
      'The user doesn’t want to proceed with this tool use.',
      true,
      'The user doesn’t want to proceed with this tool use.',
    ],
    ['is_error without output', '', true, 'error (no output)'],
    ['a plain successful output', 'export async function login(req) {\n  return db.find(req.user)\n}', false, null],
    ['a file listing line numbers (a read, not a run)', '    41→  if (!ok) {\n    42→    throw new Error: nope', false, null],
  ] as const)('%s', (_, output, isError, expected) => {
    expect(toolFailure(output, isError)).toBe(expected);
  });
});

describe('summarizeLocally: failed runs', () => {
  // The README walkthrough: twelve test runs that each end in a failing test, the tool call itself fine.
  let builder = conversation();
  for (let i = 1; i <= 12; i++) {
    const log = Array.from({ length: 30 }, (_, k) => `  ok ${k + 1} src/module${i}.test.ts > case ${k + 1} (${k + 3} ms)`);
    builder = builder
      .user(`Make src/module${i}.test.ts pass.`)
      .exchange(
        `run_${i}`,
        'run_tests',
        { file: `src/module${i}.test.ts` },
        [...log, '  not ok 31 TypeError: Cannot read properties of undefined'].join('\n'),
      )
      .assistant(`Fixed the undefined lookup in src/module${i}.ts; all 31 tests pass.`);
  }
  const summary = summarizeLocally(buildSummarizeRequest(builder.build(), null, mergePolicy()), { countTokens, maxTokens: 2000 });
  const sections = parseSections(summary);

  it('counts every failed run in TASK STATE', () => {
    expect(sections.get('TASK STATE')).toContain('Progress: 12 tool calls (12 failed), 0 files edited or written');
  });

  it('shows each run as failed, with its failing line, in TOOL HISTORY', () => {
    const history = sections.get('TOOL HISTORY') ?? [];
    expect(history.length).toBeGreaterThan(0);
    for (const line of history)
      expect(line).toMatch(/^run_tests src\/module\d+\.test\.ts → failed: not ok 31 TypeError: Cannot read properties of undefined$/);
  });

  it('names the failing line in ERRORS', () => {
    expect(sections.get('ERRORS')).toContain('not ok 31 TypeError: Cannot read properties of undefined');
  });

  it('still reports a passing run by its output', () => {
    const ok = conversation()
      .user('run the tests')
      .exchange('t1', 'Bash', { command: 'npm test' }, ' Test Files  4 passed (4)\n      Tests  42 passed (42)')
      .build();
    const parsed = parseSections(summarizeLocally(buildSummarizeRequest(ok, null, mergePolicy()), { countTokens, maxTokens: 2000 }));
    expect(parsed.get('TASK STATE')).toContain('Progress: 1 tool calls (0 failed), 0 files edited or written');
    expect(parsed.get('TOOL HISTORY')).toEqual(['Bash npm test → Test Files 4 passed (4)']);
    expect(parsed.get('ERRORS')).toBeUndefined();
  });
});

describe('summarizeLocally: an OpenHands editor error keeps its detail', () => {
  const detail = 'Parameter `old_str` is required for command: str_replace.';
  const chunk = conversation()
    .user('Fix the merge of empty sections in confkit/profile.py.')
    .exchange(
      'e1',
      'str_replace_editor',
      { command: 'str_replace', path: '/workspace/confkit/profile.py', new_str: 'x' },
      `ERROR:\n${detail}`,
      true,
    )
    .build();
  const sections = parseSections(summarizeLocally(buildSummarizeRequest(chunk, null, mergePolicy()), { countTokens, maxTokens: 2_000 }));

  it('reads `ERROR:` with the line after it as the failure', () => {
    expect(toolFailure(`ERROR:\n${detail}`, true)).toBe(`ERROR: ${detail}`);
  });

  it('names the detail in TOOL HISTORY and ERRORS, not a bare `ERROR:`', () => {
    expect((sections.get('TOOL HISTORY') ?? []).join('\n')).toContain(detail);
    expect((sections.get('ERRORS') ?? []).join('\n')).toContain(detail);
  });
});
