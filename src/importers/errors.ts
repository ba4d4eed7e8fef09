import type { FieldIssue } from '../compaction/normalize.js';

export type TranscriptErrorCode = 'TRANSCRIPT_PARSE_ERROR' | 'TRANSCRIPT_FORMAT_UNKNOWN' | 'TRANSCRIPT_INVALID';

/**
 * A transcript that cannot be imported. `line` is 1-based (what an editor shows) and set
 * whenever the problem can be pinned to a line of the input.
 */
export class TranscriptImportError extends Error {
  readonly code: TranscriptErrorCode;
  readonly line: number | undefined;
  readonly details: FieldIssue[] | undefined;

  constructor(code: TranscriptErrorCode, message: string, options: { line?: number; details?: FieldIssue[]; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TranscriptImportError';
    this.code = code;
    this.line = options.line;
    this.details = options.details;
  }
}
