import { importAnthropicMessages } from './anthropic.js';
import { importClaudeCode } from './claude-code.js';
import { importCompactdExport } from './compactd-export.js';
import { detectParsedFormat } from './detect.js';
import { TranscriptImportError } from './errors.js';
import { shortHash } from './json.js';
import { importMiniSweAgent } from './mini-swe-agent.js';
import { importOpenAIChat, importTauBench } from './openai-chat.js';
import { importOpenHands } from './openhands.js';
import { asLines, type ParsedText, parseTranscriptText } from './parse.js';
import type { ImportedConversation, ImportOptions, ImportResult, TranscriptFormat } from './types.js';

/**
 * Transcript importers: turn agent transcripts (Claude Code sessions, OpenAI and Anthropic
 * chat logs, τ-bench, mini-swe-agent and OpenHands runs) into normalized messages ready to
 * append. Pure: they take the file's text; reading it is the caller's job.
 */
export { type CompactBoundary, findCompactBoundary } from './claude-code.js';
export { detectTranscriptFormat } from './detect.js';
export { type TranscriptErrorCode, TranscriptImportError } from './errors.js';
export type { ImportedConversation, ImportOptions, ImportResult, ImportStats, TranscriptFormat } from './types.js';
export { TRANSCRIPT_FORMATS } from './types.js';

/**
 * Imports a transcript text. The format is detected unless given; every message goes
 * through ingestion normalization, so a result can be appended as is. Throws a
 * TranscriptImportError that names the line (JSONL) or message at fault.
 */
export function importTranscript(text: string, options: ImportOptions = {}): ImportResult {
  const parsed = parseTranscriptText(text);
  const format = options.format ?? detectParsedFormat(parsed, options.fileName);
  return { format, conversations: importAs(format, parsed, options, shortHash(text)) };
}

function importAs(format: TranscriptFormat, parsed: ParsedText, options: ImportOptions, fallbackId: string): ImportedConversation[] {
  switch (format) {
    case 'claude-code':
      return [importClaudeCode(asLines(parsed), options, fallbackId)];
    case 'openai':
      return [importOpenAIChat(documentOrList(parsed), options, fallbackId)];
    case 'anthropic':
      return [importAnthropicMessages(documentOrList(parsed), options, fallbackId)];
    case 'tau-bench':
      return importTauBench(documentOrList(parsed));
    case 'mini-swe-agent':
      if (parsed.kind === 'lines' && parsed.lines.length > 1) {
        throw new TranscriptImportError('TRANSCRIPT_INVALID', 'a mini-swe-agent trajectory is one JSON document, not JSON lines');
      }
      return [importMiniSweAgent(asLines(parsed)[0]?.value, options, fallbackId)];
    case 'openhands':
      return importOpenHands(parsed, options, fallbackId);
    case 'compactd-export':
      return [importCompactdExport(asLines(parsed), options, fallbackId)];
    default: {
      const unknownFormat: never = format;
      throw new TranscriptImportError('TRANSCRIPT_FORMAT_UNKNOWN', `unknown transcript format ${String(unknownFormat)}`);
    }
  }
}

/** JSON formats also come as JSON lines, one item (message or run) per line. */
function documentOrList(parsed: ParsedText): unknown {
  return parsed.kind === 'document' ? parsed.value : parsed.lines.map((l) => l.value);
}
