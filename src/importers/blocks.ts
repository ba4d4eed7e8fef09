import { isRecord } from './json.js';

/**
 * Reduces provider or transcript content blocks to the fields ingestion accepts (its
 * schemas are strict: Claude Code adds `caller` to tool_use, SDK dumps add `citations`…).
 * Thinking is dropped: it is never replayed to the model without its signature and
 * compaction has no use for it. A block type we do not know is kept as text so nothing
 * the model saw is silently lost.
 */
export function cleanAnthropicContent(content: string | readonly unknown[]): unknown[] {
  if (typeof content === 'string') return content.trim() === '' ? [] : [{ type: 'text', text: content }];
  return content.map(cleanBlock).filter((block) => block !== undefined);
}

function cleanBlock(block: unknown): unknown {
  // Non-objects and untyped blocks go through unchanged so the schema names the problem.
  if (!isRecord(block) || typeof block.type !== 'string') return block;
  switch (block.type) {
    case 'thinking':
    case 'redacted_thinking':
      return undefined;
    case 'text':
      // The Messages API rejects empty and whitespace-only text blocks.
      return typeof block.text === 'string' && block.text.trim() === '' ? undefined : { type: 'text', text: block.text };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.input ?? {} };
    case 'tool_result':
      return cleanToolResult(block);
    case 'image':
      return { type: 'image', source: block.source };
    default:
      return { type: 'text', text: `[${block.type} block] ${JSON.stringify(block)}` };
  }
}

function cleanToolResult(block: Record<string, unknown>): unknown {
  const out: Record<string, unknown> = { type: 'tool_result', tool_use_id: block.tool_use_id };
  if (block.content !== undefined && block.content !== null) out.content = cleanResultContent(block.content);
  if (typeof block.is_error === 'boolean') out.is_error = block.is_error;
  return out;
}

function cleanResultContent(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  return content.map((part: unknown) => {
    if (!isRecord(part)) return part;
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (part.type === 'image') return { type: 'image', source: part.source };
    return { type: 'text', text: `[${String(part.type)} block] ${JSON.stringify(part)}` };
  });
}
