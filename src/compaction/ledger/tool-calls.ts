import { toolResultText } from '../render.js';
import type { HistoryMessage } from '../types.js';
import type { CallResult } from './result.js';
import { USER_SHELL_TOOL, userShellCommand } from './user-shell.js';

/**
 * The tool calls of a span, each paired with its result by tool_use id (a result may sit in a
 * user message or in a role 'tool' message), plus the actions of agents that have no
 * structured tools (mini-swe-agent): an assistant's fenced shell block whose observation,
 * `<returncode>N</returncode><output>…</output>`, is the next message, and the commands a
 * Claude Code user ran in shell mode (`<bash-input>`, user-shell.ts).
 */

export interface ToolCall {
  /** seq of the message that made the call */
  seq: number;
  /** its place among the calls of that message, from 0: calls of one message ran in this order */
  at: number;
  tool: string;
  input: Record<string, unknown>;
  result: CallResult | null;
}

const FENCED_SHELL = /```(?:bash|sh|shell|console)[ \t]*\n([\s\S]*?)```/;
const FENCED_SHELLS = new RegExp(FENCED_SHELL.source, 'g');
const RETURNCODE = /<returncode>\s*(-?\d+)\s*<\/returncode>/;
const OUTPUT = /<output>\n?([\s\S]*?)<\/output>/;
/** mini-swe-agent ends the run when a command's output starts with this line: the rest is the submission, not an observation. */
const SUBMIT_MARKER = 'COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT';
/** mini-swe-agent's answer to a command that ran out of time: it ran, and was killed. */
const TIMED_OUT = /^The last command <command>[\s\S]*?<\/command> timed out and has been killed\./;

/** The tool name fenced actions are recorded under. */
export const FENCED_ACTION_TOOL = 'bash';

function textOf(message: HistoryMessage): string {
  return message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
}

/** A user message that is a fenced action's observation (mini-swe-agent), not something the user said. */
export function isObservationMessage(message: HistoryMessage): boolean {
  return message.role === 'user' && RETURNCODE.test(textOf(message).trimStart().slice(0, 64));
}

/**
 * What answered a fenced action, when the harness ran it: the observation, the notice of a
 * timeout, or the submission its marker asked for; null when the harness refused the turn
 * (a format error: nothing ran).
 */
function fencedResult(command: string, next: HistoryMessage): CallResult | null {
  const text = textOf(next);
  if (isObservationMessage(next)) {
    const code = Number(RETURNCODE.exec(text)?.[1]);
    const output = OUTPUT.exec(text)?.[1] ?? text.replace(RETURNCODE, '');
    return { text: output, isError: false, exitCode: code };
  }
  // the notice quotes the command; what it says of it, and the output, are the result
  if (TIMED_OUT.test(text.trimStart())) return { text: text.trimStart().replace(/<command>[\s\S]*?<\/command> /, ''), isError: true };
  return command.includes(SUBMIT_MARKER) ? { text, isError: false } : null;
}

function fencedAction(message: HistoryMessage, next: HistoryMessage | undefined): ToolCall | null {
  if (message.role !== 'assistant' || message.content.some((b) => b.type === 'tool_use')) return null;
  if (next?.role !== 'user') return null;
  // the harness runs a turn's action only when it holds exactly one
  const blocks = [...textOf(message).matchAll(FENCED_SHELLS)];
  const command = blocks.length === 1 ? blocks[0]?.[1] : undefined;
  if (command === undefined || command.trim().length === 0) return null;
  const result = fencedResult(command, next);
  return result === null ? null : { seq: message.seq, at: 0, tool: FENCED_ACTION_TOOL, input: { command }, result };
}

function userShellAction(message: HistoryMessage, next: HistoryMessage | undefined): ToolCall | null {
  const found = userShellCommand(message, next);
  return found === null
    ? null
    : { seq: message.seq, at: 0, tool: USER_SHELL_TOOL, input: { command: found.command }, result: found.result };
}

function asInput(input: unknown): Record<string, unknown> {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) return input as Record<string, unknown>;
  if (typeof input === 'string') {
    try {
      const parsed: unknown = JSON.parse(input);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // a raw string argument (a patch, a command): kept under `input`
    }
    return { input };
  }
  return {};
}

export function pairToolCalls(messages: readonly HistoryMessage[]): ToolCall[] {
  const results = new Map<string, CallResult>();
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === 'tool_result' && !results.has(block.tool_use_id)) {
        results.set(block.tool_use_id, { text: toolResultText(block), isError: block.is_error === true });
      }
    }
  }
  const calls: ToolCall[] = [];
  messages.forEach((message, index) => {
    let at = 0;
    for (const block of message.content) {
      if (block.type === 'tool_use') {
        calls.push({ seq: message.seq, at, tool: block.name, input: asInput(block.input), result: results.get(block.id) ?? null });
        at += 1;
      }
    }
    const next = messages[index + 1];
    const textual = fencedAction(message, next) ?? userShellAction(message, next);
    if (textual) calls.push(textual);
  });
  return calls;
}
