import { simpleCommands } from './shell.js';
import type { Step } from './steps.js';

/**
 * The last failures of a span as an agent would need them to continue: the line of each
 * failed result that reads as the error (an exception, `Error:`, an assertion, `FAILED`,
 * a compiler's `error:`), never the bare exit-code line, and the first line of each
 * failing command.
 */

export const MAX_ERRORS = 5;
export const MAX_FAILED_COMMANDS = 3;

// lines that state an error, in the order a reader looks for them
const EXCEPTION = /^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Failure|Fault|Exit|Interrupt)\b(?::|\s*$)/;
const ERROR_LINE = [
  EXCEPTION,
  /^\s*(?:\*\* )?\((?:[\w.]+)?(?:Error|Exception)\w*\)/, // Elixir: ** (CompileError) …
  /^\s*(?:error|fatal|panic)(?:\[\w+\])?:/i,
  /^\s*E\s{2,}\S/, // pytest's failure lines
  /^\s*(?:FAILED|FAIL:|ERROR:)\s*\S/,
  /\bassert(?:ion)?\b.*\bfail/i,
  /\b(?:Error|Exception):\s+\S/,
  /\b(?:No such file or directory|command not found|Permission denied|not found)\b/,
];
const NOT_AN_ERROR = /^\s*(?:Exit code\s+-?\d+|\[Command finished with exit code|<\/?returncode>|<\/?output>)/;
const TRACEBACK = /^Traceback \(most recent call last\):/m;
const MAX_LINE = 300;

function clean(line: string): string {
  // `<tool_use_error>String to replace not found…`: the wrapper tag is not part of the message
  const trimmed = line.replace(/<\/?[a-z_]+>/g, '').trim();
  return trimmed.length <= MAX_LINE ? trimmed : trimmed.slice(0, MAX_LINE);
}

/** The line of a failed result that reads as its error, or null when none does. */
export function errorLineOf(text: string): string | null {
  const lines = text.split('\n').filter((line) => line.trim().length > 0 && !NOT_AN_ERROR.test(line));
  // a Python traceback ends with the exception that was raised
  if (TRACEBACK.test(text)) {
    const raised = lines.filter((line) => EXCEPTION.test(line)).pop();
    if (raised) return clean(raised);
  }
  for (const pattern of ERROR_LINE) {
    const line = lines.find((l) => pattern.test(l));
    if (line) return clean(line);
  }
  return null;
}

function lastDistinct(values: readonly string[], max: number): string[] {
  const out: string[] = [];
  for (let i = values.length - 1; i >= 0 && out.length < max; i -= 1) {
    const value = values[i] as string;
    if (!out.includes(value)) out.unshift(value);
  }
  return out;
}

/** Error lines of the span's failed results: the last `max` distinct ones, oldest first. */
export function lastErrorLines(steps: readonly Step[], max = MAX_ERRORS): string[] {
  const lines = steps.flatMap((step) => {
    if (!step.result?.failed) return [];
    const line = errorLineOf(step.result.text);
    return line ? [line] : [];
  });
  return lastDistinct(lines, max);
}

/** Tools whose exit status 1 answers a question ("no line matched", "the files differ", "false"), not a failure. */
const ANSWERS_WITH_ONE = new Set(['grep', 'egrep', 'fgrep', 'rg', 'ag', 'diff', 'cmp', 'test', '[']);

/** A search that found nothing: exit status 1 from the last command of the pipeline being one of those tools. */
export function isNoMatch(step: Step): boolean {
  if (step.command === null || step.result?.exitCode !== 1) return false;
  const last = simpleCommands(step.command).at(-1);
  return last !== undefined && ANSWERS_WITH_ONE.has(last[0] ?? '');
}

/** First lines of the span's failing commands: the last `max` distinct ones, oldest first. */
export function lastFailedCommands(steps: readonly Step[], max = MAX_FAILED_COMMANDS): string[] {
  const commands = steps.flatMap((step) => {
    if (step.command === null || !step.result?.failed || isNoMatch(step)) return [];
    const first = step.command.split('\n').find((line) => line.trim().length > 0);
    return first ? [clean(first)] : [];
  });
  return lastDistinct(commands, max);
}
