import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';

import type { Block, HistoryMessage, ImageBlock, TextBlock } from '../../src/compaction/types.js';

/**
 * A compactd history as the message list a LangChain agent holds: user text → HumanMessage,
 * assistant text + tool_use → AIMessage with `tool_calls`, each tool_result → its own
 * ToolMessage (LangChain's shape for tool output). One stored message can become several
 * LangChain messages, so the caller gets the count per stored message to place the cutoff.
 */

function textOf(parts: ReadonlyArray<TextBlock | ImageBlock>): string {
  // An image has no text form an agent's buffer rendering could show; a marker keeps its place.
  return parts.map((p) => (p.type === 'text' ? p.text : '[image]')).join('\n');
}

function blockText(blocks: readonly Block[]): string {
  return blocks.flatMap((b) => (b.type === 'text' ? [b.text] : b.type === 'image' ? ['[image]'] : [])).join('\n');
}

function toolArgs(input: unknown): Record<string, unknown> {
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : { input };
}

/** The LangChain messages of one stored message, in order. */
export function toLangChain(message: HistoryMessage): BaseMessage[] {
  const text = blockText(message.content);
  if (message.role === 'assistant') {
    const toolCalls = message.content.flatMap((b) =>
      b.type === 'tool_use' ? [{ id: b.id, name: b.name, args: toolArgs(b.input), type: 'tool_call' as const }] : [],
    );
    return [new AIMessage({ content: text, tool_calls: toolCalls })];
  }
  if (message.role === 'system') return [new SystemMessage(text)];
  const results = message.content.flatMap((b) =>
    b.type === 'tool_result'
      ? [
          new ToolMessage({
            tool_call_id: b.tool_use_id,
            content: typeof b.content === 'string' ? b.content : textOf(b.content),
            status: b.is_error === true ? 'error' : 'success',
          }),
        ]
      : [],
  );
  // Tool output answers the call before anything the user adds in the same turn.
  return text.trim() === '' ? results : [...results, new HumanMessage(text)];
}

export interface AgentHistory {
  messages: BaseMessage[];
  /** LangChain messages that came from stored messages before `firstKeptIndex` */
  spanMessages: number;
}

/**
 * The whole history as LangChain messages; the span to summarize is the stored messages
 * before `firstKeptIndex` (the middleware can only summarize a prefix).
 */
export function agentHistory(history: readonly HistoryMessage[], firstKeptIndex: number): AgentHistory {
  const messages: BaseMessage[] = [];
  let spanMessages = 0;
  history.forEach((m, i) => {
    const converted = toLangChain(m);
    messages.push(...converted);
    if (i < firstKeptIndex) spanMessages += converted.length;
  });
  return { messages, spanMessages };
}
