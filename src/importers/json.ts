import { TranscriptImportError } from './errors.js';

/** One parsed line of a JSONL file; `line` is 1-based. */
export interface JsonLine {
  line: number;
  value: unknown;
}

/** Parses a whole JSON document, naming the line of a syntax error when the engine reports a position. */
export function parseJsonDocument(text: string): unknown {
  const body = stripBom(text);
  try {
    return JSON.parse(body) as unknown;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const position = /position (\d+)/.exec(reason);
    if (!position?.[1]) throw new TranscriptImportError('TRANSCRIPT_PARSE_ERROR', `invalid JSON: ${reason}`, { cause: err });
    const line = lineOfOffset(body, Number(position[1]));
    throw new TranscriptImportError('TRANSCRIPT_PARSE_ERROR', `line ${line}: invalid JSON: ${reason}`, { line, cause: err });
  }
}

/** Parses JSONL; blank lines are skipped, a malformed line is an error naming its line number. */
export function parseJsonLines(text: string): JsonLine[] {
  const out: JsonLine[] = [];
  const lines = stripBom(text).split('\n');
  for (let i = 0; i < lines.length; i++) {
    // Files written on Windows end lines with \r\n.
    const raw = (lines[i] ?? '').replace(/\r$/, '');
    if (raw.trim() === '') continue;
    try {
      out.push({ line: i + 1, value: JSON.parse(raw) as unknown });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new TranscriptImportError('TRANSCRIPT_PARSE_ERROR', `line ${i + 1}: invalid JSON: ${reason}`, { line: i + 1, cause: err });
    }
  }
  return out;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function lineOfOffset(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** FNV-1a (32 bit) of a text, hex: a stable id for transcripts that carry none. */
export function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}
