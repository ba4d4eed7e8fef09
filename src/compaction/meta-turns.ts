import type { Block, NormalizedMessage } from './types.js';

/**
 * Meta turns: user-role messages the user never typed — harness notifications
 * (`<task-notification>`), slash-command wrappers (`<command-name>`, `<local-command-stdout>`…),
 * system reminders, and environment events an importer keeps as context. They stay in the
 * history and in the context verbatim (the model saw them), but they are not the user's
 * request: the latest request, pins and the ledger skip them. A message is marked by
 * `metadata.meta: true`, stored with it, so nothing else about it changes.
 */

/** Opening tags of the wrappers agent harnesses write into user turns (Claude Code's, mini-swe-agent's). */
export const META_WRAPPER_TAGS = [
  'task-notification',
  'command-name',
  'command-message',
  'command-args',
  'local-command-stdout',
  'local-command-stderr',
  'local-command-caveat',
  'system-reminder',
  // a `!` shell command the user ran in Claude Code: its output is the shell's, not the user's words
  'bash-input',
  'bash-stdout',
  'bash-stderr',
  // mini-swe-agent's environment answers each fenced action with `<returncode>N</returncode><output>…`
  'returncode',
] as const;

/**
 * The line a meta turn's rendering for a summarizer starts with (render.ts), so an LLM reads
 * it for what it is and the local summarizer, which sees only text, can skip it.
 */
export const META_TURN_MARKER = '[meta turn: written by the agent harness or its environment, not by the user]';

/** Whole user turns a harness writes when the user stops it (Claude Code's): not a request. */
export const INTERRUPTION_NOTICES = ['[Request interrupted by user]', '[Request interrupted by user for tool use]'] as const;

const WRAPPER_OPENING = new RegExp(`^<(?:${META_WRAPPER_TAGS.join('|')})>`);

/** A text that is a harness wrapper, an interruption notice or a rendered meta turn. */
export function isMetaText(text: string): boolean {
  const trimmed = text.trimStart();
  return (
    WRAPPER_OPENING.test(trimmed) ||
    trimmed.startsWith(META_TURN_MARKER) ||
    (INTERRUPTION_NOTICES as readonly string[]).includes(trimmed.trimEnd())
  );
}

/**
 * Content a harness wrote: a user turn whose every non-blank text block is a wrapper (a
 * real request beside a reminder keeps the turn a request). Tool results do not count.
 */
export function isMetaContent(role: string, content: readonly Block[]): boolean {
  if (role !== 'user') return false;
  const texts = content.flatMap((b) => (b.type === 'text' && b.text.trim() !== '' ? [b.text] : []));
  return texts.length > 0 && texts.every(isMetaText);
}

/** Whether a stored or incoming message is a meta turn: flagged, or recognized by its wrappers. */
export function isMetaTurn(message: Pick<NormalizedMessage, 'role' | 'content' | 'metadata'>): boolean {
  const flag = message.metadata?.['meta'];
  if (typeof flag === 'boolean') return flag && message.role === 'user';
  return isMetaContent(message.role, message.content);
}

/**
 * The message with `metadata.meta: true` when it is a meta turn the flag does not yet say
 * (an explicit `meta: false` from the client wins over the wrappers); unchanged otherwise.
 */
export function markMetaTurn<M extends Pick<NormalizedMessage, 'role' | 'content' | 'metadata'>>(message: M): M {
  if (message.metadata?.['meta'] !== undefined || !isMetaContent(message.role, message.content)) return message;
  return { ...message, metadata: { ...message.metadata, meta: true } };
}
