import { capLine } from './command-line.js';

/**
 * The line of a failed call's output that reads as its error, verbatim: the exception or
 * error message first (`KeyError: 'region'`, `** (RuntimeError) …`, `error: …`, a compiler's
 * `file:3:5: error …`, the last line of a traceback, an assertion message), then a generic
 * failure line (`FAILED …`, `--- FAIL:`), then a failing test's header. A bare status line
 * (`Exit code 1`) never is one: readResult has taken those off the body already.
 */

export const MAX_ERROR_CHARS = 240;

const MESSAGE: RegExp[] = [
  /^\*\* \([\w.]+\) \S/, // Elixir: ** (RuntimeError) …
  /^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Failure|Fault)\b(?::|\s|$)/, // ValueError: …, django.core.exceptions.ValidationError
  /^E {2,}\S/, // pytest's detail lines
  /^(?:error|fatal|panic|Error|ERROR|FATAL|Fatal)(?:\[[\w-]+\])?:\s*\S/,
  /^\S+:\d+(?::\d+)?:?\s*(?:error|fatal error)\b/i, // compiler: file:line:col: error …
  /^[\w./-]+: (?:.*: )?(?:No such file or directory|command not found|Permission denied|cannot [a-z]|not found|Is a directory|Not a directory)/,
  /^Assertion(?: with \S+)? failed\b/,
  /^assert(?:ion)?\b.* failed\b/i,
  /^thread '.*' panicked at\b/,
  /\b\w*(?:Error|Exception): \S/,
];

const GENERIC_FAILURE: RegExp[] = [
  /^FAILED\b/,
  /^FAIL\b/,
  /^--- FAIL:/,
  /^not ok \d+/,
  /^=+ .*\b[1-9]\d* (?:failed|errors?)\b/,
  /\b[1-9]\d* (?:failed|failing|failures?|errors?)\b/i,
  /^make(?:\[\d+\])?: \*\*\*/,
];

const TEST_HEADER: RegExp[] = [/^\d+\) (?:test\b|\S+)/, /^_{3,} .+ _{3,}$/, /^● /];

/** A heading such as OpenHands' `ERROR:` says nothing alone: its detail is the next line. */
const BARE_HEADING = /^[A-Za-z][\w ]{0,30}:$/;

function lastTracebackLine(lines: readonly string[]): string | undefined {
  const start = lines.findIndex((l) => l.trim().startsWith('Traceback (most recent call last)'));
  if (start === -1) return undefined;
  for (let i = start + 1; i < lines.length; i += 1) {
    const raw = lines[i] as string;
    if (raw.trim().length > 0 && !/^\s/.test(raw) && !raw.startsWith('Traceback')) return raw.trim();
  }
  return undefined;
}

function withDetail(line: string, lines: readonly string[], at: number): string {
  if (!BARE_HEADING.test(line)) return line;
  const detail = lines.slice(at + 1).find((l) => l.length > 0);
  return detail === undefined ? line : `${line} ${detail}`;
}

/** Whether a line is a status line rather than an error: `Exit code 1`, `exit status 2`, `returncode 1`. */
export function isBareExitLine(line: string): boolean {
  return /^(?:exit(?:ed)?(?: with)? (?:code|status)|return ?code)[:=]?\s*-?\d+\.?$/i.test(line.trim());
}

/**
 * The error line of a failed call's body, or null when the output holds nothing to quote
 * (`grep` finding nothing exits 1 and prints nothing). When no line reads as an error, the
 * first line stands for it: a tool's error message, or what a program said first.
 */
export function errorLine(body: string): string | null {
  const raw = body.split('\n');
  const lines = raw.map((l) => l.trim()).filter((l) => l.length > 0 && !isBareExitLine(l));
  const traceback = lastTracebackLine(raw);
  const pick = (patterns: readonly RegExp[]) => {
    const at = lines.findIndex((l) => patterns.some((p) => p.test(l)));
    return at === -1 ? undefined : withDetail(lines[at] as string, lines, at);
  };
  const found = traceback ?? pick(MESSAGE) ?? pick(GENERIC_FAILURE) ?? pick(TEST_HEADER);
  const fallback = lines[0] === undefined ? undefined : withDetail(lines[0], lines, 0);
  const line = found ?? fallback;
  return line === undefined ? null : capLine(line, MAX_ERROR_CHARS);
}
