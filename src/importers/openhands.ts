import { buildConversation } from './build.js';
import { TranscriptImportError } from './errors.js';
import { isRecord } from './json.js';
import { stringId } from './openai-chat.js';
import type { ParsedText } from './parse.js';
import type { ImportedConversation, ImportOptions } from './types.js';

/**
 * OpenHands event streams: `{id, source, action, args, tool_call_metadata?}` actions and
 * `{id, cause, observation, content, extras}` observations, where `cause` is the id of the
 * action observed. An agent action answered by an observation becomes a tool_use (named
 * after the action) and a tool_result; `message` actions are user or assistant text.
 * Accepted as a JSON array or JSONL of events, or evaluation output (`{instance_id,
 * history}` per line or as one object): one conversation per history.
 */
export function importOpenHands(parsed: ParsedText, options: ImportOptions, fallbackId: string): ImportedConversation[] {
  const histories = historiesOf(parsed);
  return histories.map(({ events, instanceId }, index) => {
    const id = options.conversationId ?? instanceId ?? (histories.length > 1 ? `openhands-${fallbackId}-${index}` : `openhands-${fallbackId}`);
    const { raw, names, dropped } = eventsToMessages(events);
    return buildConversation({
      id,
      raw,
      names,
      format: 'anthropic',
      droppedLines: dropped,
      metadata: instanceId === undefined ? {} : { instanceId },
      ...(histories.length > 1 && { label: `history ${index}` }),
    });
  });
}

type Event = Record<string, unknown>;

function historiesOf(parsed: ParsedText): Array<{ events: unknown[]; instanceId?: string }> {
  const values = parsed.kind === 'lines' ? parsed.lines.map((l) => l.value) : [parsed.value];
  const items = values.length === 1 && Array.isArray(values[0]) ? values[0] : values;
  if (items.length > 0 && items.every((item) => isRecord(item) && Array.isArray(item.history))) {
    return items.map((item) => {
      const record = item as { history: unknown[]; instance_id?: unknown };
      const instanceId = stringId(record.instance_id);
      return instanceId === undefined ? { events: record.history } : { events: record.history, instanceId };
    });
  }
  return [{ events: items }];
}

/** Observations that carry nothing the model read (state bookkeeping). */
const SILENT_OBSERVATIONS = new Set(['agent_state_changed', 'null', 'change_agent_state']);

function eventsToMessages(events: unknown[]): { raw: unknown[]; names: string[]; dropped: number } {
  const raw: unknown[] = [];
  const names: string[] = [];
  let dropped = 0;
  const answeredBy = new Map<unknown, Event>();
  events.forEach((event, index) => {
    if (!isRecord(event)) throw new TranscriptImportError('TRANSCRIPT_INVALID', `event ${index}: an OpenHands event is a JSON object`);
    if (typeof event.observation === 'string' && event.cause !== undefined && !answeredBy.has(event.cause)) answeredBy.set(event.cause, event);
  });
  // action id → tool_use id, until the observation answering it has been placed
  const toolUseIds = new Map<unknown, string>();
  (events as Event[]).forEach((event, index) => {
    const message = typeof event.action === 'string' ? actionMessage(event, answeredBy, toolUseIds) : observationMessage(event, toolUseIds);
    if (message === undefined) dropped++;
    else {
      raw.push(message);
      names.push(`event ${index} (id ${String(event.id)})`);
    }
  });
  return { raw, names, dropped };
}

function actionMessage(event: Event, answeredBy: Map<unknown, Event>, toolUseIds: Map<unknown, string>): unknown {
  const args = isRecord(event.args) ? event.args : {};
  const action = event.action as string;
  const fromAgent = event.source === 'agent';
  if (action === 'system') return textMessage('system', args.content ?? event.message);
  if (action === 'message') return messageAction(event, args);
  const observation = answeredBy.get(event.id);
  if (fromAgent && observation && !SILENT_OBSERVATIONS.has(String(observation.observation))) {
    const toolUseId = toolCallIdOf(event) ?? `openhands-${String(event.id)}`;
    toolUseIds.set(event.id, toolUseId);
    const { thought, ...input } = args;
    const content: unknown[] = [];
    if (typeof thought === 'string' && thought.trim() !== '') content.push({ type: 'text', text: thought });
    content.push({ type: 'tool_use', id: toolUseId, name: action, input });
    return { role: 'assistant', content };
  }
  // An unobserved agent action (finish, think…) still says something to the user.
  if (fromAgent) return textMessage('assistant', args.final_thought ?? args.thought ?? args.content ?? event.message);
  return undefined;
}

function messageAction(event: Event, args: Record<string, unknown>): unknown {
  const role = event.source === 'user' ? 'user' : 'assistant';
  const text = typeof args.content === 'string' ? args.content : event.message;
  const content: unknown[] = typeof text === 'string' && text.trim() !== '' ? [{ type: 'text', text }] : [];
  // Images only go with user turns: the Messages API takes no images from the assistant.
  if (role === 'user' && Array.isArray(args.image_urls)) {
    for (const url of args.image_urls) if (typeof url === 'string') content.push({ type: 'image', source: { type: 'url', url } });
  }
  return content.length > 0 ? { role, content } : undefined;
}

function observationMessage(event: Event, toolUseIds: Map<unknown, string>): unknown {
  if (typeof event.observation !== 'string' || SILENT_OBSERVATIONS.has(event.observation)) return undefined;
  const content = typeof event.content === 'string' ? event.content : '';
  const toolUseId = event.cause === undefined ? undefined : toolUseIds.get(event.cause);
  if (toolUseId !== undefined) {
    toolUseIds.delete(event.cause);
    const result: Record<string, unknown> = { type: 'tool_result', tool_use_id: toolUseId, content };
    if (event.observation === 'error') result.is_error = true;
    return { role: 'tool', content: [result] };
  }
  // Errors and environment output not tied to an agent action reach the model as user input.
  return textMessage('user', content === '' ? undefined : event.observation === 'error' ? `[error] ${content}` : content);
}

function toolCallIdOf(event: Event): string | undefined {
  const meta = event.tool_call_metadata;
  return isRecord(meta) && typeof meta.tool_call_id === 'string' && meta.tool_call_id !== '' ? meta.tool_call_id : undefined;
}

function textMessage(role: 'system' | 'user' | 'assistant', text: unknown): unknown {
  return typeof text === 'string' && text.trim() !== '' ? { role, content: [{ type: 'text', text }] } : undefined;
}
