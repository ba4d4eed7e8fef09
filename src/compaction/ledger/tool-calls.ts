import { toolResultText } from '../render.js';
import type { HistoryMessage } from '../types.js';
import type { CallResult } from './result.js';

/**
 * The tool calls of a span, each paired with its result by tool_use id (a result may sit in a
 * user message or in a role 'tool' message), plus the actions of agents that have no
 * structured tools (mini-swe-agent): an assistant's fenced shell block whose observation,
 * `<returncode>N</returncode><output>…</output>`, is the next message.
 */

export interface ToolCall {
  /** seq of the message that made the call */
  seq: number;
  tool: string;
  input: Record<string, unknown>;
  result: CallResult | null;
}

const FENCED_SHELL = /```(?:bash|sh|shell|console)[ \t]*\n([\s\S]*?)```/;
const RETURNCODE = /<returncode>\s*(-?\d+)\s*<\/returncode>/;
const OUTPUT = /<output>\n?([\s\S]*?)<\/output>/;

/** The tool name fenced actions are recorded under. */
export const FENCED_ACTION_TOOL = 'bash';

function textOf(message: HistoryMessage): string {
  return message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
}

/** A user message that is a fenced action's observation (mini-swe-agent), not something the user said. */
export function isObservationMessage(message: HistoryMessage): boolean {
  return message.role === 'user' && RETURNCODE.test(textOf(message).trimStart().slice(0, 64));
}

function fencedAction(message: HistoryMessage, next: HistoryMessage | undefined): ToolCall | null {
  if (message.role !== 'assistant' || message.content.some((b) => b.type === 'tool_use')) return null;
  if (next === undefined || !isObservationMessage(next)) return null;
  const command = FENCED_SHELL.exec(textOf(message))?.[1];
  if (command === undefined || command.trim().length === 0) return null;
  const observation = textOf(next);
  const code = Number(RETURNCODE.exec(observation)?.[1]);
  const output = OUTPUT.exec(observation)?.[1] ?? observation.replace(RETURNCODE, '');
  return { seq: message.seq, tool: FENCED_ACTION_TOOL, input: { command }, result: { text: output, isError: false, exitCode: code } };
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
    for (const block of message.content) {
      if (block.type === 'tool_use')
        calls.push({ seq: message.seq, tool: block.name, input: asInput(block.input), result: results.get(block.id) ?? null });
    }
    const fenced = fencedAction(message, messages[index + 1]);
    if (fenced) calls.push(fenced);
  });
  return calls;
}
