import { describe, expect, it } from 'vitest';

import { errorLine } from '../../../../src/compaction/ledger/error-line.js';
import { readResult } from '../../../../src/compaction/ledger/result.js';

/** The line that reads as a failed call's error, verbatim; never a bare exit status. */

const lineOf = (text: string, isError = true) => errorLine(readResult({ text, isError }, true).body);

describe('errorLine', () => {
  it.each([
    ['Exit code 1\nCompiling\n  1) test mount (MyTest)\n     ** (RuntimeError) no secret\n', '** (RuntimeError) no secret'],
    [
      'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\n    raise KeyError(1)\nKeyError: \'region\'\nwarning: later noise',
      "KeyError: 'region'",
    ],
    ['collected 3 items\nFAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed', 'FAILED tests/test_a.py::test_x - assert 1 == 2'],
    ['running 2 tests\n  1) test renders (PageTest)\n     test/page_test.exs:12', '1) test renders (PageTest)'],
    ['src/a.ts:3:5 - error TS2322: Type string is not assignable', 'src/a.ts:3:5 - error TS2322: Type string is not assignable'],
    ['Exit code 2\n', null],
    ['<returncode>1</returncode>\n<output>\n</output>', null],
    ['Exit code 1\nSome output\nmore output', 'Some output'],
    ['<tool_use_error>String to replace not found in file.\nString: x</tool_use_error>', 'String to replace not found in file.'],
    ['bash: line 1: pytest: command not found', 'bash: line 1: pytest: command not found'],
    ['ERROR:\nParameter `old_str` is required.', 'ERROR: Parameter `old_str` is required.'],
  ])('%j', (text, expected) => {
    expect(lineOf(text)).toBe(expected);
  });

  it('caps a long line at a word', () => {
    const line = lineOf(`Error: ${'word '.repeat(100)}`);
    expect(line?.length).toBeLessThanOrEqual(240);
    expect(line?.startsWith('Error: word word')).toBe(true);
  });
});

describe('readResult', () => {
  it.each([
    [{ text: 'Exit code 3\nboom', isError: true }, 'failed', 3],
    [{ text: 'fine', isError: false }, 'ok', undefined],
    [{ text: 'out\n[The command completed with exit code 0.]', isError: false }, 'ok', 0],
    [{ text: JSON.stringify({ output: 'x', metadata: { exit_code: 7 } }), isError: false }, 'failed', 7],
    [{ text: 'broken', isError: true }, 'failed', undefined],
    [{ text: '', isError: false, exitCode: 0 }, 'ok', 0],
  ])('%j', (result, outcome, exitCode) => {
    const reading = readResult(result, true);
    expect([reading.outcome, reading.exitCode]).toEqual([outcome, exitCode]);
  });

  it('a missing result is unknown', () => {
    expect(readResult(null, true).outcome).toBe('unknown');
  });
});
