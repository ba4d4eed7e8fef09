import { buildConversation } from './build.js';
import { TranscriptImportError } from './errors.js';
import { isRecord } from './json.js';
import type { ImportedConversation, ImportOptions } from './types.js';

/**
 * Keeps the Chat Completions fields ingestion knows. Dumps of SDK responses carry more
 * (`function_call: null`, `annotations`, `audio`, `tool_calls[].index`…), which the strict
 * ingestion schema would reject although they change nothing for the history.
 */
export function cleanOpenAIMessage(message: unknown): unknown {
  if (!isRecord(message)) return message;
  const out: Record<string, unknown> = { role: message.role };
  if (message.content !== undefined) out.content = message.content;
  if (typeof message.name === 'string') out.name = message.name;
  if (typeof message.tool_call_id === 'string') out.tool_call_id = message.tool_call_id;
  if (typeof message.refusal === 'string') out.refusal = message.refusal;
  if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) out.tool_calls = message.tool_calls.map(cleanToolCall);
  return out;
}

function cleanToolCall(call: unknown): unknown {
  if (!isRecord(call) || !isRecord(call.function)) return call;
  const args = call.function.arguments;
  // Some loggers store the arguments parsed; the wire format is a JSON string.
  const argumentsText = typeof args === 'string' ? args : JSON.stringify(args ?? {});
  return { id: call.id, type: 'function', function: { name: call.function.name, arguments: argumentsText } };
}

/** A plain OpenAI chat file: an array of messages or `{messages: [...]}` (optionally with an `id`). */
export function importOpenAIChat(value: unknown, options: ImportOptions, fallbackId: string): ImportedConversation {
  const messages = Array.isArray(value) ? value : isRecord(value) && Array.isArray(value.messages) ? value.messages : undefined;
  if (!messages)
    throw new TranscriptImportError('TRANSCRIPT_INVALID', 'an OpenAI chat transcript is an array of messages or {"messages": [...]}');
  const ownId = isRecord(value) ? stringId(value.id ?? value.conversation_id) : undefined;
  return buildConversation({
    id: options.conversationId ?? ownId ?? `openai-${fallbackId}`,
    raw: messages.map(cleanOpenAIMessage),
    names: messages.map((_, index) => (Array.isArray(value) ? String(index) : `messages.${index}`)),
    format: 'openai',
    droppedLines: 0,
    metadata: {},
  });
}

/**
 * τ-bench historical trajectories: `[{task_id, trial, reward, info, traj}]`, each `traj` an
 * OpenAI chat list. One conversation per trajectory, id `task-<task_id>-trial-<trial>`.
 */
export function importTauBench(value: unknown): ImportedConversation[] {
  const runs = Array.isArray(value) ? value : [value];
  return runs.map((run, index) => {
    if (!isRecord(run) || !Array.isArray(run.traj)) {
      throw new TranscriptImportError('TRANSCRIPT_INVALID', `trajectory ${index}: expected {task_id, trial, traj: [...]}`);
    }
    const id = `task-${String(run.task_id ?? index)}-trial-${String(run.trial ?? 0)}`;
    return buildConversation({
      id,
      label: `trajectory ${index} (${id})`,
      raw: run.traj.map(cleanOpenAIMessage),
      names: run.traj.map((_, i) => `traj.${i}`),
      format: 'openai',
      droppedLines: 0,
      metadata: { taskId: run.task_id, trial: run.trial, ...(typeof run.reward === 'number' && { reward: run.reward }) },
    });
  });
}

export function stringId(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}
