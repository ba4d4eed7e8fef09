import type { Block, HistoryMessage } from './types.js';

/**
 * Identifier kinds the path/error patterns miss (SPEC §5.6a): the commands an agent ran,
 * codes mixing letters and digits (order ids, commit hashes, user handles), ISO dates and
 * e-mail addresses. Pure string work, shared by the gate and the eval.
 */

// an assistant's action written as one fenced shell block (mini-swe-agent and similar loops)
const FENCED_SHELL = /```(?:bash|sh|shell|console)\s*\n([\s\S]*?)```/g;
// a user-role text that is a command's output (mini-swe-agent's observation), not something said
const OBSERVATION = /^\s*<(returncode|output)\b/;
const CODE = /(?<![\w.@/\\-])[A-Za-z0-9_]{5,40}(?![\w@/\\-]|\.\w)/g;
const UNIT_NUMBER = /^\d+(?:[a-z]{1,3})$/;
const ISO_DATE = /(?<![\w-])\d{4}-\d{2}-\d{2}(?![\w-])/g;
const EMAIL = /(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
const MAX_COMMAND_CHARS = 160;

/** A command as an identifier: its first non-empty line, whitespace collapsed, a long one cut at a word. */
export function commandIdentifier(command: string): string | null {
  const first = command.split('\n').find((line) => line.trim().length > 0);
  if (first === undefined) return null;
  const line = first.trim().replace(/\s+/g, ' ');
  if (line.length < 2) return null;
  if (line.length <= MAX_COMMAND_CHARS) return line;
  const space = line.lastIndexOf(' ', MAX_COMMAND_CHARS);
  return line.slice(0, space > MAX_COMMAND_CHARS / 2 ? space : MAX_COMMAND_CHARS);
}

/** The commands of one block: a tool input's `command` string, or fenced shell actions in an assistant's text. */
export function blockCommands(block: Block, role: HistoryMessage['role']): string[] {
  const raw: string[] = [];
  if (block.type === 'tool_use' && typeof block.input === 'object' && block.input !== null) {
    const command = (block.input as Record<string, unknown>)['command'];
    if (typeof command === 'string') raw.push(command);
  } else if (block.type === 'text' && role === 'assistant') {
    for (const match of block.text.matchAll(FENCED_SHELL)) raw.push(match[1] ?? '');
  }
  return raw.map(commandIdentifier).filter((c): c is string => c !== null);
}

/** Every command the messages ran, deduplicated in order. */
export function extractCommands(messages: ReadonlyArray<Pick<HistoryMessage, 'role' | 'content'>>): string[] {
  return [...new Set(messages.flatMap((m) => m.content.flatMap((block) => blockCommands(block, m.role))))];
}

/** Codes, ISO dates and e-mail addresses in a text. */
export function extractIds(text: string): string[] {
  const codes = [...text.matchAll(CODE)].map((m) => m[0]).filter((v) => /\d/.test(v) && /[A-Za-z]/.test(v) && !UNIT_NUMBER.test(v));
  return [...codes, ...[...text.matchAll(ISO_DATE)].map((m) => m[0]), ...[...text.matchAll(EMAIL)].map((m) => m[0])];
}

/** Whether a user text is a command's output rather than something the user said. */
export function isObservation(role: HistoryMessage['role'], text: string): boolean {
  return role === 'user' && OBSERVATION.test(text);
}
