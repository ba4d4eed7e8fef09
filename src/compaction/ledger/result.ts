import type { CommandOutcome } from './schema.js';

/**
 * How a tool call ended, read from its result the way each agent writes it: Claude Code's
 * first line `Exit code N` (and `is_error`), mini-swe-agent's `<returncode>`, OpenHands'
 * `[The command completed with exit code N.]`, Codex's JSON `{output, metadata: {exit_code}}`
 * or its `Exit code: N` header. The body is the output with those wrappers taken off, so an
 * error line is looked for in what the program printed.
 */

export interface CallResult {
  text: string;
  isError: boolean;
  /** an exit code the transcript carries beside the text (mini-swe-agent's observation) */
  exitCode?: number;
}

export interface ResultReading {
  outcome: CommandOutcome;
  exitCode?: number;
  body: string;
}

/** The call never ran: the user turned it down or interrupted it. */
const DECLINED = [
  /^The user doesn't want to proceed with this tool use\b/,
  /^\[Request interrupted by user/,
  /^The user doesn't want to take this action\b/,
];

const EXIT_LINES: RegExp[] = [
  /^Exit code:? (-?\d+)\s*$/,
  /^\[The command completed with exit code (-?\d+)\.?\]$/,
  /^Process exited with code (-?\d+)\s*$/,
  /^<returncode>\s*(-?\d+)\s*<\/returncode>$/,
];

/** Wrapper lines around a program's output, not part of it. */
const WRAPPER_LINES: RegExp[] = [
  ...EXIT_LINES,
  /^<\/?(?:output|tool_use_error|error|stdout|stderr)>$/,
  /^Wall time: [\d.]+ ?\w*$/,
  /^Output:$/,
  /^\[Command finished with exit code -?\d+\]$/,
  /^\[Current working directory: .*\]$/,
  /^\[Python interpreter: .*\]$/,
];

/** Lines a test runner prints for a failing run when nothing else says it failed (OpenHands' output has no exit code). */
const FAILING_RUN: RegExp[] = [
  /^=+ .*\b[1-9]\d* (?:failed|errors?)\b.*=+$/,
  /^(?:Tests?|Test Files|Suites?):?\s+.*\b[1-9]\d* failed\b/i,
  /^[1-9]\d* (?:failing|tests? failed|failed\b)/,
  /^FAILED \S/,
  /^--- FAIL:/,
  /^not ok \d+\b(?!.*#\s*(?:TODO|SKIP)\b)/i,
];

const TOOL_ERROR_TEXT = /^(?:Error|ERROR)\b:?\s/;

export function isDeclined(text: string): boolean {
  const start = text.trimStart();
  return DECLINED.some((p) => p.test(start));
}

/**
 * The first characters of a trimmed exit or wrapper line (`Exit code`, `[The command`,
 * `Process exited`, `<returncode>`, `<output>`, `Wall time`, `Output:`): a line starting
 * otherwise is program output, and its patterns are not tried (most lines of an output).
 */
const WRAPPER_STARTS = new Set(['E', '[', 'P', '<', 'W', 'O']);

/** Strips `<tag>…</tag>` wrappers that sit on the same line as the text (`<tool_use_error>msg</tool_use_error>`). */
function unwrapInline(line: string): string {
  // every pattern below needs a `<` at the start or a `>` at the end
  if (!line.startsWith('<') && !line.endsWith('>')) return line;
  return line
    .replace(/^<(tool_use_error|error|output)>(.*)<\/\1>$/, '$2')
    .replace(/^<(?:tool_use_error|error|output)>/, '')
    .replace(/<\/(?:tool_use_error|error|output)>$/, '');
}

function codexJson(text: string): { output: string; exitCode?: number } | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') || !trimmed.includes('"output"')) return null;
  try {
    const value = JSON.parse(trimmed) as { output?: unknown; metadata?: { exit_code?: unknown } };
    if (typeof value.output !== 'string') return null;
    const code = value.metadata?.exit_code;
    return typeof code === 'number' && Number.isInteger(code) ? { output: value.output, exitCode: code } : { output: value.output };
  } catch {
    // not JSON after all: an output that happens to start with a brace
    return null;
  }
}

export function readResult(result: CallResult | null, isCommand: boolean): ResultReading {
  if (result === null) return { outcome: 'unknown', body: '' };
  if (isDeclined(result.text)) return { outcome: 'unknown', body: '' };
  const json = codexJson(result.text);
  const text = json?.output ?? result.text;
  let exitCode = result.exitCode ?? json?.exitCode;
  const lines = text.split('\n');
  const bodyLines: string[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (!WRAPPER_STARTS.has(line.charAt(0))) {
      bodyLines.push(unwrapInline(raw));
      continue;
    }
    if (exitCode === undefined) {
      const code = EXIT_LINES.map((p) => p.exec(line)?.[1]).find((c) => c !== undefined);
      if (code !== undefined) exitCode = Number(code);
    }
    if (WRAPPER_LINES.some((p) => p.test(line))) continue;
    bodyLines.push(unwrapInline(raw));
  }
  const body = bodyLines.join('\n');
  const withCode = exitCode === undefined ? {} : { exitCode };
  if (exitCode !== undefined) return { outcome: exitCode === 0 && !result.isError ? 'ok' : 'failed', ...withCode, body };
  if (result.isError) return { outcome: 'failed', body };
  // a tool that reports failure only in its text (τ-bench's `Error: user not found`)
  if (!isCommand && TOOL_ERROR_TEXT.test(body.trimStart())) return { outcome: 'failed', body };
  const failingRun = isCommand && bodyLines.some((l) => FAILING_RUN.some((p) => p.test(l.trim())));
  return { outcome: failingRun ? 'failed' : 'ok', body };
}
