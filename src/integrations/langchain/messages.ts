import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';

import type { AnthropicContext, Block, InputMessage } from '../../client/index.js';

/**
 * LangChain messages ⇄ compactd messages (Anthropic format). Text, tool calls and tool
 * results cross both ways; images are kept as compactd image blocks on the way in and
 * passed back as LangChain image parts; anything else a provider adds (thinking, citations)
 * is not history and stays out.
 */

type ContentPart = Record<string, unknown> & { type?: unknown };

interface UsageMetadata {
  input_tokens: number;
  output_tokens: number;
}

/** `usage_metadata` as providers fill it (the generic message type infers it away). */
const usageOf = (message: AIMessage): UsageMetadata | undefined =>
  (message as unknown as { usage_metadata?: UsageMetadata }).usage_metadata;

function parts(content: BaseMessage['content']): ContentPart[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

function textBlocks(content: BaseMessage['content']): Block[] {
  const blocks: Block[] = [];
  for (const part of parts(content)) {
    if (part.type === 'text' && typeof part['text'] === 'string' && part['text'] !== '') blocks.push({ type: 'text', text: part['text'] });
    if (part.type === 'image' && typeof part['source'] === 'object' && part['source'] !== null) {
      blocks.push({ type: 'image', source: part['source'] as Record<string, unknown> });
    }
  }
  return blocks;
}

function plainText(content: BaseMessage['content']): string {
  return textBlocks(content)
    .flatMap((b) => (b.type === 'text' ? [b.text] : []))
    .join('\n');
}

/** One LangChain message as compactd stores it, or null when it carries nothing to keep. */
export function toCompactdMessage(message: BaseMessage): InputMessage | null {
  if (ToolMessage.isInstance(message)) {
    const isError = message.status === 'error';
    return {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: message.tool_call_id,
          content: plainText(message.content),
          ...(isError ? { is_error: true } : {}),
        },
      ],
    };
  }
  if (AIMessage.isInstance(message)) {
    const calls: Block[] = (message.tool_calls ?? []).map((call) => ({
      type: 'tool_use',
      id: call.id ?? '',
      name: call.name,
      input: call.args,
    }));
    const content = [...textBlocks(message.content).filter((b) => b.type === 'text'), ...calls];
    if (content.length === 0) return null;
    const usage = usageOf(message);
    return {
      role: 'assistant',
      content,
      ...(usage ? { usage: { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens } } : {}),
    };
  }
  const role = SystemMessage.isInstance(message) ? 'system' : HumanMessage.isInstance(message) ? 'user' : null;
  if (role === null) return null;
  const content = textBlocks(message.content);
  return content.length === 0 ? null : { role, content };
}

/** The provider-reported input tokens of the call that produced an AI message (cache reads included). */
export function inputTokensOf(message: BaseMessage): number | undefined {
  return AIMessage.isInstance(message) ? usageOf(message)?.input_tokens : undefined;
}

function humanContent(blocks: Block[]): HumanMessage['content'] {
  if (blocks.every((b) => b.type === 'text')) return blocks.map((b) => (b as { text: string }).text).join('\n\n');
  return blocks.map((b) =>
    b.type === 'text' ? { type: 'text', text: b.text } : { type: 'image', source: (b as { source: Record<string, unknown> }).source },
  );
}

function resultText(content: string | Array<{ type: string; text?: string }>): string {
  return typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? (p.text ?? '') : '[image]')).join('\n');
}

/** compactd's ready context as the LangChain messages a chat model is called with. */
export function fromCompactdContext(messages: AnthropicContext['messages']): BaseMessage[] {
  const out: BaseMessage[] = [];
  for (const raw of messages) {
    const message = raw as { role: string; content: Block[] };
    if (message.role === 'assistant') {
      const text = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n\n');
      const toolCalls = message.content.flatMap((b) =>
        b.type === 'tool_use'
          ? [{ id: b.id, name: b.name, args: (b.input ?? {}) as Record<string, unknown>, type: 'tool_call' as const }]
          : [],
      );
      out.push(new AIMessage({ content: text, tool_calls: toolCalls }));
      continue;
    }
    // A user turn: tool results first (as compactd renders them), then what the user wrote.
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue;
      out.push(
        new ToolMessage({
          tool_call_id: block.tool_use_id,
          content: resultText(block.content),
          ...(block.is_error ? { status: 'error' as const } : {}),
        }),
      );
    }
    const rest = message.content.filter((b) => b.type === 'text' || b.type === 'image');
    if (rest.length > 0) out.push(new HumanMessage({ content: humanContent(rest) }));
  }
  return out;
}
