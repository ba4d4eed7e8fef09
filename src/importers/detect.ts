import { isCompactdExportLine } from './compactd-export.js';
import { TranscriptImportError } from './errors.js';
import { isRecord } from './json.js';
import { type ParsedText, parseTranscriptText } from './parse.js';
import { TRANSCRIPT_FORMATS, type TranscriptFormat } from './types.js';

/** Line types of Claude Code session files (kept and dropped alike). */
const CLAUDE_CODE_TYPES = new Set(['user', 'assistant', 'progress', 'system', 'file-history-snapshot', 'queue-operation', 'summary']);

/**
 * Guesses a transcript's format from its content; `fileName` only breaks ties (`.traj.json`).
 * Throws TRANSCRIPT_FORMAT_UNKNOWN when nothing fits, so a caller can ask for `--format`.
 */
export function detectTranscriptFormat(text: string, fileName?: string): TranscriptFormat {
  return detectParsedFormat(parseTranscriptText(text), fileName);
}

export function detectParsedFormat(parsed: ParsedText, fileName?: string): TranscriptFormat {
  const format =
    parsed.kind === 'lines' ? detectLines(parsed.lines.slice(0, 50).map((l) => l.value)) : detectDocument(parsed.value, fileName);
  if (format) return format;
  const name = fileName === undefined ? 'the transcript' : fileName;
  throw new TranscriptImportError(
    'TRANSCRIPT_FORMAT_UNKNOWN',
    `cannot tell the format of ${name}; name it explicitly (one of ${TRANSCRIPT_FORMATS.join(', ')})`,
  );
}

function detectLines(values: unknown[]): TranscriptFormat | undefined {
  // before the chat formats: an export line has a role too
  if (values.length > 0 && values.every(isCompactdExportLine)) return 'compactd-export';
  if (values.some(isOpenHandsItem)) return 'openhands';
  if (values.some(isClaudeCodeLine)) return 'claude-code';
  if (values.some(isTauRun)) return 'tau-bench';
  if (values.length > 0 && values.every((v) => isRecord(v) && typeof v.role === 'string')) return chatFlavor(values);
  return undefined;
}

function detectDocument(value: unknown, fileName: string | undefined): TranscriptFormat | undefined {
  if (Array.isArray(value)) {
    if (value.length === 0) return 'openai';
    if (value.some(isTauRun)) return 'tau-bench';
    if (value.some(isOpenHandsItem)) return 'openhands';
    if (value.every((v) => isRecord(v) && typeof v.role === 'string')) return chatFlavor(value);
    return undefined;
  }
  if (!isRecord(value)) return undefined;
  const miniSwe = typeof value.trajectory_format === 'string' && value.trajectory_format.startsWith('mini-swe-agent');
  if (miniSwe || (Array.isArray(value.messages) && isRecord(value.info) && 'mini_version' in value.info)) return 'mini-swe-agent';
  if (Array.isArray(value.messages) && fileName?.endsWith('.traj.json') === true) return 'mini-swe-agent';
  if (isTauRun(value)) return 'tau-bench';
  if (isOpenHandsItem(value)) return 'openhands';
  if (isClaudeCodeLine(value)) return 'claude-code';
  if (Array.isArray(value.messages)) return value.system !== undefined ? 'anthropic' : chatFlavor(value.messages);
  return undefined;
}

function isTauRun(value: unknown): boolean {
  return isRecord(value) && Array.isArray(value.traj) && 'task_id' in value;
}

function isOpenHandsItem(value: unknown): boolean {
  if (!isRecord(value)) return false;
  if (Array.isArray(value.history)) return true;
  return typeof value.action === 'string' || (typeof value.observation === 'string' && 'cause' in value);
}

function isClaudeCodeLine(value: unknown): boolean {
  return (
    isRecord(value) &&
    typeof value.type === 'string' &&
    CLAUDE_CODE_TYPES.has(value.type) &&
    ('sessionId' in value || 'uuid' in value || 'messageId' in value)
  );
}

/** OpenAI and Anthropic chat lists look alike until a tool call, a null content or a block type tells them apart. */
function chatFlavor(messages: unknown[]): TranscriptFormat {
  for (const message of messages) {
    if (!isRecord(message)) continue;
    if ('tool_calls' in message || 'tool_call_id' in message || message.role === 'developer' || message.content === null) return 'openai';
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (!isRecord(part)) continue;
      if (part.type === 'image_url') return 'openai';
      if (part.type === 'tool_use' || part.type === 'tool_result' || part.type === 'thinking' || part.type === 'image') return 'anthropic';
    }
  }
  return 'openai';
}
