import type { AssistantModelMessage, ModelMessage, ToolModelMessage, UserModelMessage } from 'ai';

import type { AnthropicContext, Block, InputMessage } from '../../client/index.js';

/**
 * AI SDK `ModelMessage`s ⇄ compactd messages (Anthropic format). Text, tool calls and tool
 * results cross both ways; reasoning, files and provider-executed tool results are not
 * history and stay out.
 */

type ToolOutput = Extract<ToolModelMessage['content'][number], { type: 'tool-result' }>['output'];

function outputText(output: ToolOutput): { text: string; isError: boolean } {
  switch (output.type) {
    case 'text':
      return { text: output.value, isError: false };
    case 'error-text':
      return { text: output.value, isError: true };
    case 'json':
      return { text: JSON.stringify(output.value), isError: false };
    case 'error-json':
      return { text: JSON.stringify(output.value), isError: true };
    case 'execution-denied':
      return { text: output.reason ?? 'the tool call was denied', isError: true };
    case 'content':
      return { text: output.value.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n'), isError: false };
  }
}

function textOf(content: string | ReadonlyArray<{ type: string; text?: string }>): Block[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return content.flatMap((part) => (part.type === 'text' && part.text ? [{ type: 'text' as const, text: part.text }] : []));
}

/** One AI SDK message as compactd stores it, or null when it carries nothing to keep. */
export function toCompactdMessage(message: ModelMessage): InputMessage | null {
  switch (message.role) {
    case 'system':
      return message.content.trim() === '' ? null : { role: 'system', content: message.content };
    case 'user': {
      const content = textOf(message.content);
      return content.length === 0 ? null : { role: 'user', content };
    }
    case 'assistant': {
      const parts = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
      const content: Block[] = [];
      for (const part of parts) {
        if (part.type === 'text' && part.text !== '') content.push({ type: 'text', text: part.text });
        if (part.type === 'tool-call' && part.providerExecuted !== true)
          content.push({ type: 'tool_use', id: part.toolCallId, name: part.toolName, input: part.input });
      }
      return content.length === 0 ? null : { role: 'assistant', content };
    }
    case 'tool': {
      const content: Block[] = message.content.flatMap((part) => {
        if (part.type !== 'tool-result') return [];
        const { text, isError } = outputText(part.output);
        return [{ type: 'tool_result' as const, tool_use_id: part.toolCallId, content: text, ...(isError ? { is_error: true } : {}) }];
      });
      return content.length === 0 ? null : { role: 'user', content };
    }
  }
}

function resultText(content: string | Array<{ type: string; text?: string }>): string {
  return typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? (p.text ?? '') : '[image]')).join('\n');
}

/** compactd's ready context as the AI SDK messages of a step (the system prompt travels apart). */
export function fromCompactdContext(messages: AnthropicContext['messages']): ModelMessage[] {
  const toolNames = new Map<string, string>();
  const out: ModelMessage[] = [];
  for (const raw of messages) {
    const message = raw as { role: string; content: Block[] };
    if (message.role === 'assistant') {
      const content: Exclude<AssistantModelMessage['content'], string> = [];
      for (const block of message.content) {
        if (block.type === 'text') content.push({ type: 'text', text: block.text });
        if (block.type === 'tool_use') {
          toolNames.set(block.id, block.name);
          content.push({ type: 'tool-call', toolCallId: block.id, toolName: block.name, input: block.input });
        }
      }
      out.push({ role: 'assistant', content });
      continue;
    }
    // A user turn: tool results first (as compactd renders them), then what the user wrote.
    const results: ToolModelMessage['content'] = message.content.flatMap((block) => {
      if (block.type !== 'tool_result') return [];
      const value = resultText(block.content);
      const output: ToolOutput = block.is_error ? { type: 'error-text', value } : { type: 'text', value };
      return [
        { type: 'tool-result' as const, toolCallId: block.tool_use_id, toolName: toolNames.get(block.tool_use_id) ?? 'unknown', output },
      ];
    });
    if (results.length > 0) out.push({ role: 'tool', content: results });
    const text: Exclude<UserModelMessage['content'], string> = message.content.flatMap((b) =>
      b.type === 'text' ? [{ type: 'text' as const, text: b.text }] : [],
    );
    if (text.length > 0) out.push({ role: 'user', content: text });
  }
  return out;
}
