import { renderBlock } from '../render.js';
import type { Block, HistoryMessage, TextBlock, ToolResultBlock, ToolUseBlock } from '../types.js';

/**
 * Puts a history in the order both chat APIs accept before it is rendered as a request
 * (SPEC §6.1 "ready to send: valid tool pairing, no orphans"). compactd stores messages as
 * they were appended; histories recorded with parallel tool calls often interleave them
 * (call A, call B, result A, text, result B). Providers want every result directly after
 * the message that made the call, so the context is *placed*, not rejected:
 *
 * - each tool_result moves to a user turn right after the assistant message holding its
 *   tool_use (results of one message keep their recorded order);
 * - a tool_use that no result answers (a call still pending, or one whose result was never
 *   appended) and a tool_result that answers no earlier call, or repeats an answered one,
 *   stay where they were as plain text in the same marker format the summarizer reads
 *   (render.ts), so nothing is lost and nothing is sent half-paired;
 * - blank text blocks (and blank text parts of tool results) are dropped, and a message
 *   left with no content is dropped: Anthropic rejects blank text.
 *
 * Compaction keeps a tool exchange whole (units.ts), so after a compaction a call and its
 * result are both active or both archived; the text fallbacks are for histories that were
 * appended that way.
 */

export type ContextMessage = Pick<HistoryMessage, 'role' | 'content'>;

const isBlankText = (block: Block): boolean => block.type === 'text' && block.text.trim() === '';

/** Where each call id was first opened, and the ids some later message answers. */
function indexCalls(history: readonly ContextMessage[]): { opener: Map<string, number>; answeredLater: Set<string> } {
  const opener = new Map<string, number>();
  const answeredLater = new Set<string>();
  history.forEach((message, k) => {
    for (const block of message.content) {
      if (block.type === 'tool_result') {
        const at = opener.get(block.tool_use_id);
        if (at !== undefined && at < k) answeredLater.add(block.tool_use_id);
      }
    }
    if (message.role !== 'assistant') return;
    for (const block of message.content) if (block.type === 'tool_use' && !opener.has(block.id)) opener.set(block.id, k);
  });
  return { opener, answeredLater };
}

function cleanResult(block: ToolResultBlock): ToolResultBlock {
  if (typeof block.content === 'string') return block;
  const parts = block.content.filter((part) => !isBlankText(part));
  return { ...block, content: parts.length > 0 ? parts : '' };
}

function asText(block: ToolUseBlock | ToolResultBlock, toolNames: ReadonlyMap<string, string>): TextBlock {
  return { type: 'text', text: renderBlock(block, toolNames) };
}

/** Returns the history with every tool exchange paired as providers require (see above). */
export function placeToolResults(history: readonly ContextMessage[]): ContextMessage[] {
  const { opener, answeredLater } = indexCalls(history);
  const toolNames = new Map<string, string>();
  for (const message of history) for (const block of message.content) if (block.type === 'tool_use') toolNames.set(block.id, block.name);

  const placedAfter = new Map<number, ToolResultBlock[]>();
  const placed = new Set<string>();
  const called = new Set<string>();
  const kept: Block[][] = history.map((message, k) =>
    message.content.flatMap((block): Block[] => {
      if (isBlankText(block)) return [];
      if (block.type === 'tool_use') {
        // only the first assistant occurrence of an id that gets answered stays a call
        const isCall = message.role === 'assistant' && opener.get(block.id) === k && answeredLater.has(block.id) && !called.has(block.id);
        if (isCall) called.add(block.id);
        return [isCall ? block : asText(block, toolNames)];
      }
      if (block.type !== 'tool_result') return [block];
      const at = opener.get(block.tool_use_id);
      if (at === undefined || at >= k || placed.has(block.tool_use_id)) return [asText(block, toolNames)];
      placed.add(block.tool_use_id);
      placedAfter.set(at, [...(placedAfter.get(at) ?? []), cleanResult(block)]);
      return [];
    }),
  );

  const out: ContextMessage[] = [];
  history.forEach((message, k) => {
    const content = kept[k] ?? [];
    if (content.length > 0) out.push({ role: message.role, content });
    const results = placedAfter.get(k);
    if (results) out.push({ role: 'user', content: results });
  });
  return out;
}
