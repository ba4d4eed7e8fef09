import type { Block, HistoryMessage, ImageBlock, TextBlock, ToolResultBlock } from './types.js';

/**
 * Turns the active history into a ready-to-send request body (SPEC §6.1 `context`).
 * Anthropic: system-role messages merged into `system`, tool results inside user turns,
 * consecutive same-role turns merged. OpenAI: system messages kept in place, tool_use →
 * `tool_calls`, tool_result → `role: "tool"` messages.
 *
 * As a last line of defence a tool_result whose tool_use is not in the context is sent as
 * plain text: providers reject orphaned results, and losing the request is worse.
 */

type ContextMessage = Pick<HistoryMessage, 'role' | 'content'>;

export interface AnthropicContext {
  system?: string;
  messages: Array<{ role: 'user' | 'assistant'; content: Block[] }>;
}

export interface OpenAIContextMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null | Array<Record<string, unknown>>;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface OpenAIContext {
  messages: OpenAIContextMessage[];
}

const textOf = (content: readonly Block[]): string =>
  content
    .filter((b): b is TextBlock => b.type === 'text')
    .map((b) => b.text)
    .join('\n\n');

function resultText(block: ToolResultBlock): string {
  if (typeof block.content === 'string') return block.content;
  return block.content.map((part) => (part.type === 'text' ? part.text : '[image]')).join('\n');
}

/** Replaces orphaned tool_result blocks (no tool_use earlier in the context) with text. */
function withoutOrphans(messages: readonly ContextMessage[]): ContextMessage[] {
  const opened = new Set<string>();
  return messages.map((message) => {
    let changed = false;
    const content = message.content.map((block): Block => {
      if (block.type === 'tool_use') opened.add(block.id);
      if (block.type === 'tool_result' && !opened.has(block.tool_use_id)) {
        changed = true;
        return { type: 'text', text: `[result of tool call ${block.tool_use_id}]\n${resultText(block)}` };
      }
      return block;
    });
    return changed ? { ...message, content } : message;
  });
}

export function renderAnthropicContext(history: readonly ContextMessage[]): AnthropicContext {
  const systemParts: string[] = [];
  const out: AnthropicContext['messages'] = [];
  for (const message of withoutOrphans(history)) {
    if (message.role === 'system') {
      const text = textOf(message.content);
      if (text) systemParts.push(text);
      continue;
    }
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const last = out[out.length - 1];
    if (last && last.role === role) last.content = orderBlocks([...last.content, ...message.content]);
    else out.push({ role, content: orderBlocks([...message.content]) });
  }
  return systemParts.length > 0 ? { system: systemParts.join('\n\n'), messages: out } : { messages: out };
}

/** Anthropic wants tool_result blocks first in a user turn. */
function orderBlocks(content: Block[]): Block[] {
  const results = content.filter((b) => b.type === 'tool_result');
  if (results.length === 0 || results.length === content.length) return content;
  return [...results, ...content.filter((b) => b.type !== 'tool_result')];
}

function imagePart(block: ImageBlock): Record<string, unknown> {
  const source = block.source;
  const url =
    source['type'] === 'base64'
      ? `data:${String(source['media_type'])};base64,${String(source['data'])}`
      : String(source['url'] ?? '');
  return { type: 'image_url', image_url: { url } };
}

export function renderOpenAIContext(history: readonly ContextMessage[]): OpenAIContext {
  const out: OpenAIContextMessage[] = [];
  for (const message of withoutOrphans(history)) {
    if (message.role === 'system') {
      out.push({ role: 'system', content: textOf(message.content) });
      continue;
    }
    if (message.role === 'assistant') {
      const calls = message.content.flatMap((b) =>
        b.type === 'tool_use'
          ? [{ id: b.id, type: 'function' as const, function: { name: b.name, arguments: typeof b.input === 'string' ? b.input : JSON.stringify(b.input ?? {}) } }]
          : [],
      );
      const text = textOf(message.content);
      out.push(calls.length > 0 ? { role: 'assistant', content: text || null, tool_calls: calls } : { role: 'assistant', content: text });
      continue;
    }
    // user or tool: every tool_result becomes a `tool` message; the rest stays a user message.
    for (const block of message.content) {
      if (block.type === 'tool_result') out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: resultText(block) });
    }
    const rest = message.content.filter((b) => b.type === 'text' || b.type === 'image');
    if (rest.length === 0) continue;
    const hasImage = rest.some((b) => b.type === 'image');
    out.push({
      role: 'user',
      content: hasImage ? rest.map((b) => (b.type === 'text' ? { type: 'text', text: b.text } : imagePart(b as ImageBlock))) : textOf(rest),
    });
  }
  return { messages: out };
}
