import type { Block, ImageBlock, TextBlock, ToolResultBlock } from '../types.js';
import { type ContextMessage, placeToolResults } from './place-tool-results.js';

/**
 * The active history as the OpenAI Responses API's `input` (SPEC §6.1 `context`,
 * `format=responses`), tool results placed after their calls first (place-tool-results.ts):
 * system messages (the clip-archive by default) become `developer` messages in place, user
 * text and images `input_text` / `input_image` parts, assistant text an `output_text` message,
 * each tool call a `function_call` item and each result a `function_call_output` item.
 */

export type ResponsesInputItem = Record<string, unknown>;

export interface ResponsesContext {
  input: ResponsesInputItem[];
}

const textOf = (content: readonly Block[]): string =>
  content
    .filter((b): b is TextBlock => b.type === 'text')
    .map((b) => b.text)
    .filter((text) => text.trim() !== '')
    .join('\n\n');

function resultText(block: ToolResultBlock): string {
  if (typeof block.content === 'string') return block.content;
  return block.content.map((part) => (part.type === 'text' ? part.text : '[image]')).join('\n');
}

function imageUrl(block: ImageBlock): string {
  const source = block.source;
  return source['type'] === 'base64'
    ? `data:${String(source['media_type'])};base64,${String(source['data'])}`
    : String(source['url'] ?? '');
}

/** One stored message as Responses input items (a message may hold several calls or results). */
export function responsesItemsOf(message: ContextMessage): ResponsesInputItem[] {
  if (message.role === 'system') {
    const text = textOf(message.content);
    return text === '' ? [] : [{ type: 'message', role: 'developer', content: [{ type: 'input_text', text }] }];
  }
  if (message.role === 'assistant') {
    const items: ResponsesInputItem[] = [];
    const text = textOf(message.content);
    if (text !== '') items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
    for (const block of message.content) {
      if (block.type !== 'tool_use') continue;
      items.push({
        type: 'function_call',
        call_id: block.id,
        name: block.name,
        arguments: typeof block.input === 'string' ? block.input : JSON.stringify(block.input ?? {}),
      });
    }
    return items;
  }
  const items: ResponsesInputItem[] = message.content
    .filter((b): b is ToolResultBlock => b.type === 'tool_result')
    .map((b) => ({ type: 'function_call_output', call_id: b.tool_use_id, output: resultText(b) }));
  const parts = message.content.flatMap((b): Array<Record<string, unknown>> => {
    if (b.type === 'text') return b.text.trim() === '' ? [] : [{ type: 'input_text', text: b.text }];
    if (b.type === 'image') return [{ type: 'input_image', image_url: imageUrl(b) }];
    return [];
  });
  if (parts.length > 0) items.push({ type: 'message', role: 'user', content: parts });
  return items;
}

/** The context as a Responses request's `input`; the agent's own instructions go in `instructions`, as it sends them. */
export function renderResponsesContext(history: readonly ContextMessage[]): ResponsesContext {
  return { input: placeToolResults(history).flatMap(responsesItemsOf) };
}
