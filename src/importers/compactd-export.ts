import { buildConversation } from './build.js';
import { isRecord, type JsonLine } from './json.js';
import type { ImportedConversation, ImportOptions } from './types.js';

/**
 * compactd's own JSONL export (`GET /v1/conversations/:id/export`: one line per message of the
 * active history and the archive, `{seq, role, kind, content, name?, metadata?, usage?, pinned?}`).
 * Each message line is appended again as it was appended — role, content, name, metadata (the
 * importer's fields and the meta flag), usage and pin — so importing an export gives a
 * conversation whose export has the same messages (compactd/client `messageFromExportLine`
 * does the same for a program). A clip-archive line is dropped: compaction wrote it, and the
 * new conversation's compactions write their own.
 */
export function importCompactdExport(lines: readonly JsonLine[], options: ImportOptions, fallbackId: string): ImportedConversation {
  const raw: unknown[] = [];
  const sourceLines: number[][] = [];
  let dropped = 0;
  for (const { line, value } of lines) {
    if (!isRecord(value) || value.kind !== 'message') {
      dropped += 1;
      continue;
    }
    const usage = isRecord(value.usage) ? value.usage : undefined;
    raw.push({
      role: value.role,
      content: value.content,
      ...(typeof value.name === 'string' && { name: value.name }),
      ...(isRecord(value.metadata) && { metadata: value.metadata }),
      ...(usage && {
        usage: {
          ...(typeof usage.inputTokens === 'number' && { inputTokens: usage.inputTokens }),
          ...(typeof usage.outputTokens === 'number' && { outputTokens: usage.outputTokens }),
        },
      }),
      ...(value.pinned === true && { pinned: true }),
    });
    sourceLines.push([line]);
  }
  return buildConversation({
    id: options.conversationId ?? `compactd-export-${fallbackId}`,
    raw,
    sourceLines,
    format: 'anthropic',
    droppedLines: dropped,
    metadata: {},
  });
}

/** A line of compactd's export: a seq, a role, and a kind of the active history or archive. */
export function isCompactdExportLine(value: unknown): boolean {
  return (
    isRecord(value) &&
    typeof value.seq === 'number' &&
    typeof value.role === 'string' &&
    (value.kind === 'message' || value.kind === 'clip_archive') &&
    Array.isArray(value.content)
  );
}
