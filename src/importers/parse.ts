import { TranscriptImportError } from './errors.js';
import { type JsonLine, parseJsonDocument, parseJsonLines } from './json.js';

/** A transcript text parsed once: one JSON document, or JSON lines with their line numbers. */
export type ParsedText = { kind: 'document'; value: unknown } | { kind: 'lines'; lines: JsonLine[] };

/**
 * Parses a transcript text. A text that is not one JSON document but whose first line is a
 * complete JSON value is JSON lines; otherwise the document's own syntax error is reported,
 * so a broken pretty-printed file is not blamed on its first line.
 */
export function parseTranscriptText(text: string): ParsedText {
  if (text.trim() === '') throw new TranscriptImportError('TRANSCRIPT_PARSE_ERROR', 'the transcript is empty');
  try {
    return { kind: 'document', value: JSON.parse(text.replace(/^\uFEFF/, '')) as unknown };
  } catch {
    // Not one document: JSON lines, or a broken document (reported below with its line).
  }
  const firstLine =
    text
      .replace(/^\uFEFF/, '')
      .split('\n')
      .find((line) => line.trim() !== '') ?? '';
  if (parsesAlone(firstLine)) return { kind: 'lines', lines: parseJsonLines(text) };
  return { kind: 'document', value: parseJsonDocument(text) };
}

/** The lines of a parsed text (a single JSON document counts as line 1). */
export function asLines(parsed: ParsedText): JsonLine[] {
  return parsed.kind === 'lines' ? parsed.lines : [{ line: 1, value: parsed.value }];
}

function parsesAlone(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
