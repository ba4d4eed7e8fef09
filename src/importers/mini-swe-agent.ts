import { buildConversation } from './build.js';
import { TranscriptImportError } from './errors.js';
import { isRecord } from './json.js';
import { stringId } from './openai-chat.js';
import type { ImportedConversation, ImportOptions } from './types.js';

/**
 * A mini-swe-agent trajectory (`{info, messages, trajectory_format: "mini-swe-agent-1",
 * instance_id}`). Its agent has no structured tools: each assistant message holds one
 * fenced bash action and the next user message is the observation. The pairing is only
 * positional, so messages stay plain text with their roles (`extra`, the raw completion,
 * is left out).
 */
export function importMiniSweAgent(value: unknown, options: ImportOptions, fallbackId: string): ImportedConversation {
  if (!isRecord(value) || !Array.isArray(value.messages)) {
    throw new TranscriptImportError(
      'TRANSCRIPT_INVALID',
      'a mini-swe-agent trajectory is {"messages": [...], "info": {...}, "instance_id": ...}',
    );
  }
  const info = isRecord(value.info) ? value.info : {};
  const messages: readonly unknown[] = value.messages;
  const raw = messages.map((message, index) => {
    if (!isRecord(message)) return message;
    const kept = { role: message.role, content: cleanContent(message.content) };
    // the harness answers every action in a user turn (the observation, a format complaint,
    // the submitted diff): the user typed only the task, so those are meta turns, never a
    // request — the task stays the newest request the plan protects
    return message.role === 'user' && answersAction(messages, index) ? { ...kept, metadata: { meta: true } } : kept;
  });
  const metadata: Record<string, unknown> = {};
  if (value.instance_id !== undefined) metadata.instanceId = value.instance_id;
  if (info.exit_status !== undefined) metadata.exitStatus = info.exit_status;
  if (info.mini_version !== undefined) metadata.miniVersion = info.mini_version;
  if (value.trajectory_format !== undefined) metadata.trajectoryFormat = value.trajectory_format;
  return buildConversation({
    id: options.conversationId ?? stringId(value.instance_id) ?? `mini-swe-agent-${fallbackId}`,
    raw,
    names: raw.map((_, i) => `messages.${i}`),
    format: 'openai',
    droppedLines: 0,
    metadata,
  });
}

/** Whether the message at `index` follows one of the agent's replies (its environment speaking). */
function answersAction(messages: readonly unknown[], index: number): boolean {
  const previous = messages[index - 1];
  return isRecord(previous) && previous.role === 'assistant';
}

/** Newer versions store content as text parts, with extra keys (cache_control) we drop. */
function cleanContent(content: unknown): unknown {
  if (content === undefined || content === null) return '';
  if (!Array.isArray(content)) return content;
  return content.map((part: unknown) => (isRecord(part) && part.type === 'text' ? { type: 'text', text: part.text } : part));
}
