import { imageFacts, imageReference } from '../images.js';
import type { Block } from '../types.js';

/**
 * The recall text of an archived message (SPEC §5.9): what an agent may later type to find it,
 * one entry per line — text blocks, the string values of tool inputs (a path, a command), tool
 * results — each with the tool it belongs to. Lines longer than a piece are cut into
 * overlapping parts so a fragment of up to `RECALL_OVERLAP_CHARS` is always whole in one part.
 */

/** Characters of one stored piece of a line. */
export const RECALL_PIECE_CHARS = 400;
/** Consecutive parts of a long line share this many characters: the longest fragment always found whole. */
export const RECALL_OVERLAP_CHARS = 120;
/** Pieces one message contributes at most (~6 MB of text): past this, words are still found by full-text search. */
export const RECALL_MAX_PIECES = 16_000;

export interface RecallLine {
  /** 1-based, over the message's recall text */
  line: number;
  /** the tool of the tool call or result the line is in; null for text */
  tool: string | null;
  text: string;
}

export interface RecallPiece extends RecallLine {
  /** 0-based part of the line */
  part: number;
}

/** Every string inside a tool input, depth first, in key order (the values a path or command is in). */
function stringsOf(value: unknown, out: string[]): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, out);
  else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) stringsOf(item, out);
  return out;
}

function blockTexts(block: Block, toolNames: ReadonlyMap<string, string>): { tool: string | null; texts: string[] } {
  switch (block.type) {
    case 'text':
      return { tool: null, texts: [block.text] };
    case 'tool_use':
      return { tool: block.name, texts: stringsOf(block.input, []) };
    case 'tool_result': {
      const texts =
        typeof block.content === 'string'
          ? [block.content]
          : block.content.map((b) => (b.type === 'text' ? b.text : imageReference(imageFacts(b))));
      return { tool: toolNames.get(block.tool_use_id) ?? null, texts };
    }
    case 'image':
      // its reference is a line of its own, so a search for `img:…` finds the archived original
      return { tool: null, texts: [imageReference(imageFacts(block))] };
  }
}

/**
 * The non-blank lines of a message's blocks, numbered from 1. `toolNames` maps a tool_use id
 * to its tool, for the results (their call may sit in an earlier message).
 */
export function recallLines(content: readonly Block[], toolNames: ReadonlyMap<string, string>): RecallLine[] {
  const lines: RecallLine[] = [];
  for (const block of content) {
    const { tool, texts } = blockTexts(block, toolNames);
    for (const text of texts) {
      for (const raw of text.split('\n')) {
        const line = raw.replace(/\s+$/, '');
        if (line.trim() !== '') lines.push({ line: lines.length + 1, tool, text: line });
      }
    }
  }
  return lines;
}

/** Cuts a line into parts of `RECALL_PIECE_CHARS` (by code point), each overlapping the previous by `RECALL_OVERLAP_CHARS`. */
export function splitLine(text: string): string[] {
  const chars = Array.from(text);
  if (chars.length <= RECALL_PIECE_CHARS) return [text];
  const step = RECALL_PIECE_CHARS - RECALL_OVERLAP_CHARS;
  const parts: string[] = [];
  for (let start = 0; ; start += step) {
    parts.push(chars.slice(start, start + RECALL_PIECE_CHARS).join(''));
    if (start + RECALL_PIECE_CHARS >= chars.length) return parts;
  }
}

/**
 * The pieces a message is stored as, at most `RECALL_MAX_PIECES`: consecutive short lines of
 * the same tool packed into one piece of up to `RECALL_PIECE_CHARS` (joined by newlines, the
 * piece numbered by its first line), a long line alone in its overlapping parts. Lines average
 * ~50 characters, so packing stores several times fewer rows (and trigram entries) than one
 * row per line; a line never spans two pieces unless it is longer than one.
 */
export function recallPieces(content: readonly Block[], toolNames: ReadonlyMap<string, string>): RecallPiece[] {
  const pieces: RecallPiece[] = [];
  let open: RecallPiece | null = null;
  for (const line of recallLines(content, toolNames)) {
    const parts = splitLine(line.text);
    if (parts.length === 1 && open !== null && open.tool === line.tool && open.text.length + 1 + line.text.length <= RECALL_PIECE_CHARS) {
      open.text += `\n${line.text}`;
      continue;
    }
    if (open !== null) pieces.push(open);
    open = null;
    if (pieces.length >= RECALL_MAX_PIECES) return pieces;
    if (parts.length === 1) {
      open = { ...line, part: 0 };
      continue;
    }
    for (const [part, text] of parts.entries()) {
      if (pieces.length >= RECALL_MAX_PIECES) return pieces;
      pieces.push({ ...line, part, text });
    }
  }
  if (open !== null && pieces.length < RECALL_MAX_PIECES) pieces.push(open);
  return pieces;
}

/** The lines a stored piece holds, numbered as `recallLines` numbers them (a part of a long line is that line). */
export function pieceLines(piece: Pick<RecallPiece, 'line' | 'part' | 'tool' | 'text'>): RecallLine[] {
  // a line holds no newline, so a piece's newlines are exactly its line breaks
  return piece.text.split('\n').map((text, i) => ({ line: piece.line + (piece.part === 0 ? i : 0), tool: piece.tool, text }));
}

/** The tool_use ids a message's results answer. */
export function answeredToolUseIds(content: readonly Block[]): string[] {
  return content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
}

/** The tool_use id → tool name pairs a message's calls define. */
export function toolCallNames(content: readonly Block[]): Array<[string, string]> {
  return content.flatMap((b): Array<[string, string]> => (b.type === 'tool_use' ? [[b.id, b.name]] : []));
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * At most `max` characters of a line, around the first case-insensitive occurrence of
 * `fragment` (or its start when absent), with `…` where it was cut. Reads a window of a few
 * times `max` around the match, so a 2 MB line costs no more than a short one.
 */
export function focusLine(text: string, fragment: string, max: number): string {
  if (text.length <= max) return text;
  const at = fragment === '' ? -1 : text.toLowerCase().indexOf(fragment.toLowerCase());
  const keep = max - 2; // room for an ellipsis at each end
  let from = Math.max(0, (at < 0 ? 0 : at) - 2 * max);
  let to = Math.min(text.length, from + 4 * max + fragment.length);
  if (from > 0 && isLowSurrogate(text.charCodeAt(from))) from += 1;
  if (to < text.length && isHighSurrogate(text.charCodeAt(to - 1))) to -= 1;
  const chars = Array.from(text.slice(from, to));
  if (from === 0 && to === text.length && chars.length <= max) return text;
  const atChars = at < 0 ? 0 : Array.from(text.slice(from, at)).length;
  const start = Math.max(0, Math.min(atChars - Math.floor(keep / 4), chars.length - keep));
  const before = from > 0 || start > 0;
  const after = to < text.length || start + keep < chars.length;
  return `${before ? '…' : ''}${chars.slice(start, start + keep).join('')}${after ? '…' : ''}`;
}
