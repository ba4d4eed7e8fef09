import { clipErrorLine, errorLines } from '../summarize/index.js';

/**
 * Tells a failed tool call from its output, for the local summarizer. A tool rarely marks
 * its own failure: a test runner prints `not ok 31 TypeError…` or `FAIL …` and the call
 * still "succeeds", a shell reports a non-zero exit code in text, a script ends in a
 * traceback. Reporting such a run by its first line ("ok 1 …") told the next reader that
 * everything passed.
 */

/** Lines a test runner prints for a failing test or run (TAP, jest/vitest, pytest, go, mocha). */
const FAILING_TEST_LINE = [
  /^not ok \d+\b(?!.*#\s*(?:TODO|SKIP)\b)/i,
  /^FAIL(?:ED)?\b/,
  /^--- FAIL:/,
  /^[✗✕×]\s+\S/,
  /^=+ .*\b[1-9]\d* (?:failed|errors?)\b.*=+$/,
  /^(?:Tests?|Test Files|Suites?):?\s+.*\b[1-9]\d* failed\b/i,
  /^[1-9]\d* failing\b/,
];

/**
 * A non-zero exit status written in the output (Claude Code, mini-swe-agent, shells, CI
 * logs), as a status line: ending with the code, so prose about exit codes (docs a fetch
 * returned) does not count.
 */
const EXIT_CODE = [
  /\bexit(?:ed)?(?: with)? (?:code|status)[:=]?\s*(-?\d+)\)?\.?$/i,
  /<returncode>\s*(-?\d+)\s*<\/returncode>/i,
  /^\[exit (-?\d+)\]$/i,
];

/** How the output ends when a program died: the exception line after a traceback, or `Error: …`. */
const FINAL_ERROR_LINE = [/^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b(?::|$)/, /^(?:Error|error|ERROR|fatal|FATAL|panic):\s*\S/];

/** The lines of the output's end worth checking for a crash: a traceback prints its cause last. */
const TAIL_LINES = 3;

/**
 * The line saying why the call failed, or null when nothing says it did. `isError` (the
 * result's own `is_error`) always counts as failed; the line is then the first failure or
 * error line found, else the output's first line.
 */
export function toolFailure(output: string, isError: boolean): string | null {
  const lines = output
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  const signal = lines.find((line) => FAILING_TEST_LINE.some((p) => p.test(line))) ?? finalError(lines) ?? exitCodeLine(lines);
  if (signal !== undefined) return clipErrorLine(signal);
  if (!isError) return null;
  const line = errorLines(output)[0] ?? lines[0];
  return line === undefined ? 'error (no output)' : clipErrorLine(withDetail(line, lines));
}

/** A bare heading such as OpenHands' `ERROR:` says nothing alone: its detail is the next line. */
const BARE_HEADING = /^[A-Za-z][\w ]{0,30}:$/;

function withDetail(line: string, lines: readonly string[]): string {
  if (!BARE_HEADING.test(line)) return line;
  const detail = lines[lines.indexOf(line) + 1];
  return detail === undefined ? line : `${line} ${detail}`;
}

function finalError(lines: readonly string[]): string | undefined {
  const tail = lines.slice(-TAIL_LINES);
  return tail.find((line) => FINAL_ERROR_LINE.some((p) => p.test(line)));
}

function exitCodeLine(lines: readonly string[]): string | undefined {
  return lines.find((line) =>
    EXIT_CODE.some((pattern) => {
      const code = pattern.exec(line)?.[1];
      return code !== undefined && Number(code) !== 0;
    }),
  );
}
