import { imageFacts, imageReference } from './images.js';
import { isMetaContent, META_TURN_MARKER } from './meta-turns.js';
import type { Block, HistoryMessage, ToolResultBlock } from './types.js';

/**
 * Plain-text rendering of content blocks. The summarizer has no tools, so tool calls and
 * results reach it as text; the local summarizer reads the rendering back, so the marker lines
 * below are a format, not decoration. A chunk's request numbers its tool ids (`shortToolIds`);
 * other renderings (scoring, the local summarizer's own input) carry the provider's ids.
 * A line of content shaped like a marker gets a backslash in front, so content cannot pose as
 * another call's result (a numbered id is easy to guess).
 *
 *   [tool call NAME id=ID]            followed by the JSON input on the next line
 *   [tool result NAME id=ID]          followed by the output
 *   [tool result NAME id=ID error]    for an `is_error` result
 */

export const TOOL_CALL_MARKER = /^\[tool call (\S+) id=(\S+)\]$/;
export const TOOL_RESULT_MARKER = /^\[tool result (\S+) id=(\S+)( error)?\]$/;

const MARKER_SHAPED_LINE = /^(?=\[tool (?:call|result) )/gm;

/** Content lines that would read as marker lines, quoted with a leading backslash. */
export function quoteMarkerLines(text: string): string {
  return text.includes('[tool ') ? text.replace(MARKER_SHAPED_LINE, '\\') : text;
}

/** Tool names and ids are rendered inside a marker line, so whitespace and brackets are replaced. */
function markerToken(value: string): string {
  const cleaned = value.replace(/[\s[\]]+/g, '_');
  return cleaned.length > 0 ? cleaned : '_';
}

/** Maps every tool_use id opened by these messages to its tool name. */
export function toolNamesOf(messages: readonly HistoryMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === 'tool_use') names.set(block.id, block.name);
    }
  }
  return names;
}

export function toolResultText(block: ToolResultBlock): string {
  if (typeof block.content === 'string') return block.content;
  return block.content.map((part) => (part.type === 'text' ? part.text : imageReference(imageFacts(part)))).join('\n');
}

function renderInput(input: unknown): string {
  if (input === undefined) return '{}';
  try {
    return JSON.stringify(input) ?? '{}';
  } catch {
    // inputs come from jsonb and cannot be cyclic; a failure here means a foreign object
    return String(input);
  }
}

/**
 * Short stand-ins for tool_use ids, numbered in order of appearance: an id only pairs a call
 * with its result, and a provider's id costs a summarizer some fifteen tokens each time.
 */
export function shortToolIds(messages: readonly HistoryMessage[]): Map<string, string> {
  const ids = new Map<string, string>();
  const note = (id: string) => {
    if (!ids.has(id)) ids.set(id, String(ids.size + 1));
  };
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === 'tool_use') note(block.id);
      else if (block.type === 'tool_result') note(block.tool_use_id);
    }
  }
  return ids;
}

export function renderBlock(block: Block, toolNames: ReadonlyMap<string, string>, shortIds?: ReadonlyMap<string, string>): string {
  const idOf = (id: string) => markerToken(shortIds?.get(id) ?? id);
  switch (block.type) {
    case 'text':
      return quoteMarkerLines(block.text);
    case 'tool_use':
      return `[tool call ${markerToken(block.name)} id=${idOf(block.id)}]\n${renderInput(block.input)}`;
    case 'tool_result': {
      const name = markerToken(toolNames.get(block.tool_use_id) ?? 'unknown');
      const flag = block.is_error === true ? ' error' : '';
      return `[tool result ${name} id=${idOf(block.tool_use_id)}${flag}]\n${quoteMarkerLines(toolResultText(block))}`;
    }
    case 'image':
      // described, with the id recall finds the archived original by (compaction/images.ts)
      return imageReference(imageFacts(block));
  }
}

/**
 * A message's content as one text, blocks separated by blank lines. A meta turn opens with
 * its marker line, so a summarizer reads it as the harness's, not as the user's words.
 */
export function renderMessageText(
  message: HistoryMessage,
  toolNames: ReadonlyMap<string, string>,
  shortIds?: ReadonlyMap<string, string>,
): string {
  const text = message.content.map((block) => renderBlock(block, toolNames, shortIds)).join('\n\n');
  return message.meta === true ? `${META_TURN_MARKER}\n${text}` : text;
}

/**
 * A user message that carries text typed by (or for) the user, not only tool results, and
 * is no meta turn (a harness notification or wrapper): what "the latest request" and the
 * pinned user turns are made of.
 */
export function isUserTextMessage(message: HistoryMessage): boolean {
  if (message.meta === true) return false;
  if (message.features) return message.kind === 'message' && message.features.userText;
  return (
    message.kind === 'message' &&
    message.role === 'user' &&
    message.content.some((block) => block.type === 'text' && block.text.trim().length > 0) &&
    // unflagged (meta undefined): recognized by its wrappers; an explicit `meta: false` wins
    (message.meta === false || !isMetaContent(message.role, message.content))
  );
}
