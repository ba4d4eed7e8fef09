import { toolResultText } from '../render.js';
import type { Block, ImageBlock, TextBlock } from '../types.js';
import { type ContextMessage, placeToolResults } from './place-tool-results.js';

/**
 * Turns the active history into a ready-to-send request body (SPEC §6.1 `context`), one
 * that the provider's API accepts (the rules are pinned by src/llm-sim/validate-*.ts).
 * Both formats first place tool results right after their calls (place-tool-results.ts).
 * Anthropic: system-role messages (the clip-archive by default) merged into the top-level
 * `system`, tool results first inside user turns, consecutive same-role turns merged, a
 * user turn first, no trailing whitespace at the end of a final assistant turn.
 * OpenAI: system messages kept in place, tool_use → `tool_calls`, tool_result → `role:
 * "tool"` messages.
 */

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

/**
 * Opening turn for an Anthropic context whose first turn would be the assistant's (a kept
 * tail that starts with an assistant reply after the clip-archive went to `system`): the
 * API wants a user turn first.
 */
export const CONTEXT_OPENING_USER_TURN = '(The conversation continues from here.)';

export function renderAnthropicContext(history: readonly ContextMessage[]): AnthropicContext {
  const systemParts: string[] = [];
  const out: AnthropicContext['messages'] = [];
  const ids = anthropicToolIds();
  for (const message of placeToolResults(history)) {
    if (message.role === 'system') {
      const text = textOf(message.content);
      if (text.trim() !== '') systemParts.push(text);
      continue;
    }
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const content = message.content.map((block) => anthropicBlock(block, ids));
    const last = out[out.length - 1];
    if (last && last.role === role) last.content = orderBlocks([...last.content, ...content]);
    else out.push({ role, content: orderBlocks(content) });
  }
  if (out[0]?.role === 'assistant') out.unshift({ role: 'user', content: [{ type: 'text', text: CONTEXT_OPENING_USER_TURN }] });
  trimFinalAssistantTurn(out);
  return systemParts.length > 0 ? { system: systemParts.join('\n\n'), messages: out } : { messages: out };
}

/**
 * Anthropic takes tool ids matching [A-Za-z0-9_-]+ and tool inputs that are objects; ids
 * and inputs appended in another format may be neither. Ids are rewritten the same way
 * for the call and its result (distinct ids stay distinct), other inputs are wrapped.
 */
function anthropicToolIds(): (id: string) => string {
  const mapped = new Map<string, string>();
  const taken = new Set<string>();
  return (id) => {
    const known = mapped.get(id);
    if (known !== undefined) return known;
    let safe = /^[a-zA-Z0-9_-]+$/.test(id) ? id : id.replace(/[^a-zA-Z0-9_-]/g, '_');
    for (let n = 2; taken.has(safe); n += 1) safe = `${safe}_${n}`;
    mapped.set(id, safe);
    taken.add(safe);
    return safe;
  };
}

function anthropicBlock(block: Block, toolId: (id: string) => string): Block {
  if (block.type === 'tool_use') {
    const input =
      typeof block.input === 'object' && block.input !== null && !Array.isArray(block.input)
        ? block.input
        : { arguments: block.input ?? null };
    return { ...block, id: toolId(block.id), input };
  }
  if (block.type === 'tool_result') return { ...block, tool_use_id: toolId(block.tool_use_id) };
  return block;
}

/** A final assistant turn is a prefill to the API, which refuses one ending in whitespace. */
function trimFinalAssistantTurn(out: AnthropicContext['messages']): void {
  const last = out[out.length - 1];
  const tail = last?.role === 'assistant' ? last.content[last.content.length - 1] : undefined;
  if (last && tail?.type === 'text') last.content = [...last.content.slice(0, -1), { type: 'text', text: tail.text.trimEnd() }];
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
    source['type'] === 'base64' ? `data:${String(source['media_type'])};base64,${String(source['data'])}` : String(source['url'] ?? '');
  return { type: 'image_url', image_url: { url } };
}

export function renderOpenAIContext(history: readonly ContextMessage[]): OpenAIContext {
  const out: OpenAIContextMessage[] = [];
  for (const message of placeToolResults(history)) {
    if (message.role === 'system') {
      out.push({ role: 'system', content: textOf(message.content) });
      continue;
    }
    if (message.role === 'assistant') {
      const calls = message.content.flatMap((b) =>
        b.type === 'tool_use'
          ? [
              {
                id: b.id,
                type: 'function' as const,
                function: { name: b.name, arguments: typeof b.input === 'string' ? b.input : JSON.stringify(b.input ?? {}) },
              },
            ]
          : [],
      );
      const text = textOf(message.content);
      out.push(calls.length > 0 ? { role: 'assistant', content: text || null, tool_calls: calls } : { role: 'assistant', content: text });
      continue;
    }
    // user or tool: every tool_result becomes a `tool` message; the rest stays a user message.
    for (const block of message.content) {
      if (block.type === 'tool_result') out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: toolResultText(block) });
    }
    const rest = message.content.filter((b) => b.type === 'text' || b.type === 'image');
    if (rest.length === 0) continue;
    const hasImage = rest.some((b) => b.type === 'image');
    out.push({
      role: 'user',
      content: hasImage ? rest.map((b) => (b.type === 'text' ? { type: 'text', text: b.text } : imagePart(b))) : textOf(rest),
    });
  }
  return { messages: out };
}
