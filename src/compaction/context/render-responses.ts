import { toolResultText } from '../render.js';
import type { Block, ImageBlock, NativeClip, TextBlock, ToolResultBlock } from '../types.js';
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
    .map((b) => ({ type: 'function_call_output', call_id: b.tool_use_id, output: toolResultText(b) }));
  const parts = message.content.flatMap((b): Array<Record<string, unknown>> => {
    if (b.type === 'text') return b.text.trim() === '' ? [] : [{ type: 'input_text', text: b.text }];
    if (b.type === 'image') return [{ type: 'input_image', image_url: imageUrl(b) }];
    return [];
  });
  if (parts.length > 0) items.push({ type: 'message', role: 'user', content: parts });
  return items;
}

/** A message of the history, and the provider's compaction it carries, if any (native-context.ts `ContextRow`). */
export type ResponsesContextRow = ContextMessage & { native?: NativeClip | null };

/**
 * The context as a Responses request's `input`; the agent's own instructions go in
 * `instructions`, as it sends them. An OpenAI compaction item (strategy `native`'s, or one the
 * gateway stored as the conversation's clip) goes in its place exactly as the provider returned
 * it, with compactd's state beside it as a developer message, for the model that made it (any
 * model when `model` is not given); for another model the row's own text stands in for it. No
 * tool exchange spans such an item (compaction keeps an exchange whole, and what precedes a
 * provider's clip is archived), so the results are placed on each side of it.
 */
export function renderResponsesContext(history: readonly ResponsesContextRow[], model?: string): ResponsesContext {
  const input: ResponsesInputItem[] = [];
  let run: ContextMessage[] = [];
  const flush = () => {
    input.push(...placeToolResults(run).flatMap(responsesItemsOf));
    run = [];
  };
  for (const row of history) {
    const native = row.native;
    if (!native || native.compaction.provider !== 'openai' || (model !== undefined && model !== native.compaction.model)) {
      run.push(row);
      continue;
    }
    flush();
    input.push(...nativeResponsesItems(native));
  }
  flush();
  return { input };
}

/** An OpenAI compaction item exactly as the provider returned it, then compactd's state as a developer message. */
export function nativeResponsesItems(native: NativeClip): ResponsesInputItem[] {
  const items: ResponsesInputItem[] = [native.compaction.item];
  if (native.state.trim() !== '') items.push({ type: 'message', role: 'developer', content: [{ type: 'input_text', text: native.state }] });
  return items;
}
