import { buildConversation } from './build.js';
import { MISSING_RESULT_TEXT } from './claude-code-turns.js';
import { TranscriptImportError } from './errors.js';
import { isRecord } from './json.js';
import { stringId } from './openai-chat.js';
import { modelReplyOf, type ModelToolCall, toolCallMetadata } from './openhands-response.js';
import type { ParsedText } from './parse.js';
import type { ImportedConversation, ImportOptions } from './types.js';

/**
 * OpenHands event streams: `{id, source, action, args, tool_call_metadata?}` actions and
 * `{id, cause, observation, content, extras}` observations, where `cause` is the id of the
 * action observed. The history holds what the model saw and did:
 * - each reply of the model is one assistant message with the model's own text and tool
 *   calls, read from `tool_call_metadata.model_response` (the action's name and args only
 *   for events that record no response); the observations answering its calls follow it,
 *   as tool results in call order, content verbatim (an `error` observation is_error);
 * - `message` actions are user or assistant text, the `system` action the system prompt;
 * - environment events are no user turns: state bookkeeping and `recall` are dropped (a
 *   recall's `content` is a note, "Added workspace context"; what the agent got from it is
 *   rendered at prompt time from its extras), and an observation answering no call (an
 *   error raised before any tool ran) stays as a user turn flagged `meta`, because
 *   OpenHands does show it to the model that way, but it is never the user's request.
 * Accepted as a JSON array or JSONL of events, or evaluation output (`{instance_id,
 * history}` per line or as one object, the history flat or as `[action, observation]`
 * pairs): one conversation per history.
 */
export function importOpenHands(parsed: ParsedText, options: ImportOptions, fallbackId: string): ImportedConversation[] {
  const histories = historiesOf(parsed);
  return histories.map(({ events, instanceId }, index) => {
    const id =
      options.conversationId ?? instanceId ?? (histories.length > 1 ? `openhands-${fallbackId}-${index}` : `openhands-${fallbackId}`);
    const turns = eventsToTurns(events);
    const { raw, names, synthesized } = flatten(turns.items);
    return buildConversation({
      id,
      raw,
      names,
      format: 'anthropic',
      droppedLines: turns.dropped,
      extraStats: { duplicateToolResults: turns.duplicateResults, synthesizedToolResults: synthesized },
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
      const events = flattenPairs(record.history);
      const instanceId = stringId(record.instance_id);
      return instanceId === undefined ? { events } : { events, instanceId };
    });
  }
  return [{ events: flattenPairs(items) }];
}

/** Older evaluation output stores the history as `[action, observation]` pairs. */
function flattenPairs(history: unknown[]): unknown[] {
  return history.flatMap((entry) => (Array.isArray(entry) ? entry : [entry]));
}

/** Observations that carry nothing the model read (state bookkeeping, recall notes). */
const DROPPED_OBSERVATIONS = new Set(['agent_state_changed', 'null', 'change_agent_state', 'recall']);

interface ToolResult {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

/** One reply of the model: its text, its calls and, filled as they come, their results. */
interface Reply {
  kind: 'reply';
  key: string;
  text: string;
  calls: ModelToolCall[];
  results: Map<string, ToolResult>;
  metadata: Record<string, unknown>;
  usage?: { inputTokens: number; outputTokens: number };
  name: string;
}

interface Plain {
  kind: 'plain';
  raw: Record<string, unknown>;
  name: string;
}

type Turn = Reply | Plain;

interface Turns {
  items: Turn[];
  dropped: number;
  duplicateResults: number;
}

function eventsToTurns(events: unknown[]): Turns {
  events.forEach((event, index) => {
    if (!isRecord(event)) throw new TranscriptImportError('TRANSCRIPT_INVALID', `event ${index}: an OpenHands event is a JSON object`);
  });
  // actions something the model read answered (a state change or recall note answers nothing)
  const observed = new Set(
    (events as Event[])
      .filter((e) => typeof e.observation === 'string' && !DROPPED_OBSERVATIONS.has(e.observation) && e.cause !== undefined)
      .map((e) => e.cause),
  );
  const out: Turns = { items: [], dropped: 0, duplicateResults: 0 };
  const replies = new Map<string, Reply>(); // reply key → its turn
  const callOfAction = new Map<unknown, { reply: Reply; callId: string }>(); // action id → the call it carried out
  const callById = new Map<string, Reply>(); // tool call id → the reply that made it
  (events as Event[]).forEach((event, index) => {
    const name = `event ${index} (id ${String(event.id)})`;
    if (typeof event.action === 'string') {
      const turn = actionTurn(event, name, observed.has(event.id), replies);
      if (turn === undefined) out.dropped++;
      else if (turn.kind === 'plain') out.items.push(turn);
      else {
        if (!replies.has(turn.reply.key)) {
          replies.set(turn.reply.key, turn.reply);
          out.items.push(turn.reply);
          for (const call of turn.reply.calls) callById.set(call.id, turn.reply);
        }
        callOfAction.set(event.id, { reply: turn.reply, callId: turn.callId });
      }
      return;
    }
    const observation = typeof event.observation === 'string' ? event.observation : undefined;
    if (observation === undefined || DROPPED_OBSERVATIONS.has(observation)) {
      out.dropped++;
      return;
    }
    const content = withExitCode(typeof event.content === 'string' ? event.content : '', event);
    const recordedId = toolCallMetadata(event)?.toolCallId;
    const target =
      (recordedId !== undefined && callById.has(recordedId) ? { reply: callById.get(recordedId), callId: recordedId } : undefined) ??
      callOfAction.get(event.cause);
    if (target?.reply) {
      if (target.reply.results.has(target.callId)) out.duplicateResults++;
      else target.reply.results.set(target.callId, toolResult(target.callId, content, observation === 'error'));
      return;
    }
    // Answering no call: OpenHands shows it to the model as a user message; it is no request.
    if (content.trim() === '') out.dropped++;
    else
      out.items.push({
        kind: 'plain',
        raw: { role: 'user', content: [{ type: 'text', text: content }], metadata: { meta: true, observation } },
        name,
      });
  });
  return out;
}

/**
 * A command's output as the model read it: OpenHands records the exit code in the observation's
 * `extras.metadata.exit_code` and shows it to the model after the output
 * (`[The command completed with exit code N.]`), which is how the state ledger reads it too.
 */
function withExitCode(content: string, event: Event): string {
  const extras = event.extras as { metadata?: { exit_code?: unknown } } | undefined;
  const code = extras?.metadata?.exit_code;
  if (event.observation !== 'run' || typeof code !== 'number' || !Number.isInteger(code) || code < 0) return content;
  if (/exit code -?\d+/i.test(content.slice(-200))) return content;
  return `${content}${content === '' || content.endsWith('\n') ? '' : '\n'}[The command completed with exit code ${code}.]`;
}

function toolResult(callId: string, content: string, isError: boolean): ToolResult {
  return isError
    ? { type: 'tool_result', tool_use_id: callId, content, is_error: true }
    : { type: 'tool_result', tool_use_id: callId, content };
}

type ActionTurn = Plain | { kind: 'call'; reply: Reply; callId: string } | undefined;

function actionTurn(event: Event, name: string, observed: boolean, replies: Map<string, Reply>): ActionTurn {
  const args = isRecord(event.args) ? event.args : {};
  const action = event.action as string;
  if (action === 'system') return plainText('system', args.content ?? event.message, name);
  if (action === 'message') return messageAction(event, args, name);
  if (event.source !== 'agent') return undefined; // recall and other requests of the environment
  const reply = modelReplyOf(event);
  const meta = toolCallMetadata(event);
  if (reply) {
    const existing = replies.get(reply.key);
    const turn: Reply = existing ?? {
      kind: 'reply',
      key: reply.key,
      text: reply.text,
      calls: reply.calls,
      results: new Map(),
      metadata: reply.model === undefined ? {} : { model: reply.model },
      ...(reply.usage && { usage: reply.usage }),
      name,
    };
    const callId = meta?.toolCallId ?? reply.calls[0]?.id ?? '';
    // An action whose call the response does not list still ran: its call joins the reply.
    if (!turn.calls.some((c) => c.id === callId)) turn.calls.push(actionCall(event, args, callId, meta?.functionName ?? action));
    return { kind: 'call', reply: turn, callId };
  }
  // No model response recorded: the action itself is the call, when the model made it as one.
  if (meta !== undefined || observed) {
    const callId = meta?.toolCallId ?? `openhands-${String(event.id)}`;
    const call = actionCall(event, args, callId, meta?.functionName ?? action);
    const thought = typeof args.thought === 'string' ? args.thought : '';
    const turn: Reply = {
      kind: 'reply',
      key: `action ${String(event.id)} ${callId}`,
      text: thought,
      calls: [call],
      results: new Map(),
      metadata: {},
      name,
    };
    return { kind: 'call', reply: turn, callId };
  }
  // An action of a text-only agent, observed by nothing (finish, think…), still says something.
  return plainText('assistant', args.final_thought ?? args.thought ?? args.content ?? event.message, name);
}

function actionCall(event: Event, args: Record<string, unknown>, id: string, name: string): ModelToolCall {
  const { thought: _thought, ...input } = args;
  return { id: id === '' ? `openhands-${String(event.id)}` : id, name, input };
}

function messageAction(event: Event, args: Record<string, unknown>, name: string): Plain | undefined {
  const role = event.source === 'user' ? 'user' : 'assistant';
  const text = typeof args.content === 'string' ? args.content : event.message;
  const content: unknown[] = typeof text === 'string' && text.trim() !== '' ? [{ type: 'text', text }] : [];
  // Images only go with user turns: the Messages API takes no images from the assistant.
  if (role === 'user' && Array.isArray(args.image_urls)) {
    for (const url of args.image_urls) if (typeof url === 'string') content.push({ type: 'image', source: { type: 'url', url } });
  }
  // An environment message (source "environment") is no request of the user.
  const metadata = event.source === 'environment' ? { meta: true } : undefined;
  return content.length > 0 ? { kind: 'plain', raw: { role, content, ...(metadata && { metadata }) }, name } : undefined;
}

function plainText(role: 'system' | 'assistant', text: unknown, name: string): Plain | undefined {
  return typeof text === 'string' && text.trim() !== ''
    ? { kind: 'plain', raw: { role, content: [{ type: 'text', text }] }, name }
    : undefined;
}

/**
 * The turns in wire order: each reply, then one message answering its calls in call order.
 * A call no observation answered gets an error result once something follows it (the
 * provider wants every call of a reply answered in the next message); a last reply with no
 * result at all is left pending, as the strict validity rules allow.
 */
function flatten(items: Turn[]): { raw: unknown[]; names: string[]; synthesized: number } {
  const raw: unknown[] = [];
  const names: string[] = [];
  let synthesized = 0;
  items.forEach((item, index) => {
    if (item.kind === 'plain') {
      raw.push(item.raw);
      names.push(item.name);
      return;
    }
    const content: unknown[] = item.text.trim() === '' ? [] : [{ type: 'text', text: item.text }];
    for (const call of item.calls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input });
    raw.push({ role: 'assistant', content, metadata: item.metadata, ...(item.usage && { usage: item.usage }) });
    names.push(item.name);
    const isLast = index === items.length - 1;
    if (item.calls.length === 0 || (isLast && item.results.size === 0)) return;
    const results = item.calls.map((call) => {
      const result = item.results.get(call.id);
      if (result) return result;
      synthesized++;
      return toolResult(call.id, MISSING_RESULT_TEXT, true);
    });
    raw.push({ role: 'tool', content: results });
    names.push(`results of ${item.name}`);
  });
  return { raw, names, synthesized };
}
