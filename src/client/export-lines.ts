import type { Block, ExportLine, InputMessage } from './types.js';

/**
 * The message an export line appends again as (`appendMessages`, default format): its role,
 * content, name, metadata (the importer's fields and the `meta` flag), usage and pin, as it was
 * appended. Null for a clip-archive line: compaction wrote it, and a new conversation's
 * compactions write their own. So `export → append every line's message` makes a conversation
 * whose export has the same messages, metadata and pins.
 */
export function messageFromExportLine(line: ExportLine): InputMessage | null {
  if (line.kind !== 'message') return null;
  return {
    role: line.role,
    // the export's blocks are the stored, normalized ones, which an append takes as they are
    content: line.content as unknown as Block[],
    ...(line.name === undefined ? {} : { name: line.name }),
    ...(line.metadata === undefined ? {} : { metadata: line.metadata }),
    ...(line.usage === undefined ? {} : { usage: usageOf(line.usage) }),
    ...(line.pinned ? { pinned: true } : {}),
  };
}

function usageOf(usage: NonNullable<ExportLine['usage']>): NonNullable<InputMessage['usage']> {
  return {
    ...(usage.inputTokens === undefined ? {} : { inputTokens: usage.inputTokens }),
    ...(usage.outputTokens === undefined ? {} : { outputTokens: usage.outputTokens }),
  };
}
