import type { HistoryMessage } from '../types.js';
import type { CallResult } from './result.js';

/**
 * Claude Code's shell mode: the user types `!cmd`, and the harness writes a user turn
 * `<bash-input>cmd</bash-input>` and the output as `<bash-stdout>…</bash-stdout><bash-stderr>…</bash-stderr>`
 * (a failure ends stderr with `Exit code N`), in the same turn or the next; `<`, `>` and `&`
 * inside may be written as entities. The command ran in the session's shell like any the
 * agent ran, so the ledger counts it among the work's commands (the turns stay meta: never
 * the user's request or constraint).
 */

/** The tool name a command the user ran in shell mode is recorded under. */
export const USER_SHELL_TOOL = 'user shell';

const INPUT = /^<bash-input>([\s\S]*?)<\/bash-input>/;
const STDOUT = /<bash-stdout>([\s\S]*?)<\/bash-stdout>/;
const STDERR = /<bash-stderr>([\s\S]*?)<\/bash-stderr>/;
const OUTPUT_START = /^<bash-std(?:out|err)>/;

function userText(message: HistoryMessage | undefined): string {
  if (message?.role !== 'user') return '';
  return message.content
    .flatMap((b) => (b.type === 'text' ? [b.text] : []))
    .join('\n')
    .trimStart();
}

function unescapeEntities(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

function shellOutput(text: string): CallResult {
  const streams = [STDOUT.exec(text)?.[1], STDERR.exec(text)?.[1]].map((s) => unescapeEntities(s ?? '').trim()).filter((s) => s.length > 0);
  return { text: streams.join('\n'), isError: false };
}

/** The command a user turn ran in shell mode, with its output when the transcript has it; null for any other turn. */
export function userShellCommand(
  message: HistoryMessage,
  next: HistoryMessage | undefined,
): { command: string; result: CallResult | null } | null {
  const text = userText(message);
  const input = INPUT.exec(text)?.[1];
  if (input === undefined) return null;
  const command = unescapeEntities(input);
  if (command.trim().length === 0) return null;
  const after = text.slice(text.indexOf('</bash-input>'));
  if (STDOUT.test(after) || STDERR.test(after)) return { command, result: shellOutput(after) };
  const nextText = userText(next);
  return { command, result: OUTPUT_START.test(nextText) ? shellOutput(nextText) : null };
}
