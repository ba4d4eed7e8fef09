import { cleanAnthropicContent } from './blocks.js';
import { buildConversation } from './build.js';
import { TranscriptImportError } from './errors.js';
import { isRecord } from './json.js';
import { stringId } from './openai-chat.js';
import type { ImportedConversation, ImportOptions } from './types.js';

/**
 * An Anthropic Messages transcript: `{system?, messages}` (a request body, or a log of one)
 * or a bare array of messages. The top-level `system` becomes a leading system message.
 */
export function importAnthropicMessages(value: unknown, options: ImportOptions, fallbackId: string): ImportedConversation {
  const messages = Array.isArray(value) ? value : isRecord(value) && Array.isArray(value.messages) ? value.messages : undefined;
  if (!messages)
    throw new TranscriptImportError(
      'TRANSCRIPT_INVALID',
      'an Anthropic transcript is {"system"?, "messages": [...]} or an array of messages',
    );
  const raw: unknown[] = [];
  const names: string[] = [];
  const system = isRecord(value) ? value.system : undefined;
  if (system !== undefined && system !== null) {
    if (typeof system !== 'string' && !Array.isArray(system)) {
      throw new TranscriptImportError('TRANSCRIPT_INVALID', 'system: must be a string or a list of text blocks');
    }
    const blocks = cleanAnthropicContent(system);
    if (blocks.length > 0) {
      raw.push({ role: 'system', content: blocks });
      names.push('system');
    }
  }
  messages.forEach((message, index) => {
    raw.push(cleanAnthropicMessage(message));
    names.push(Array.isArray(value) ? String(index) : `messages.${index}`);
  });
  const ownId = isRecord(value) ? stringId(value.id ?? value.conversation_id) : undefined;
  return buildConversation({
    id: options.conversationId ?? ownId ?? `anthropic-${fallbackId}`,
    raw,
    names,
    format: 'anthropic',
    droppedLines: 0,
    metadata: {},
  });
}

function cleanAnthropicMessage(message: unknown): unknown {
  if (!isRecord(message)) return message;
  const { content } = message;
  // Anything but a string or a list goes through as is, so validation names the bad field.
  const valid = typeof content === 'string' || Array.isArray(content);
  const out: Record<string, unknown> = { role: message.role, content: valid ? cleanAnthropicContent(content) : content };
  if (typeof message.name === 'string') out.name = message.name;
  return out;
}
