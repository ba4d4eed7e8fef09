import {
  CONTEXT_OPENING_USER_TURN,
  nativeResponsesItems,
  openWithCompactionBlock,
  responsesItemsOf,
  systemWithText,
} from '../../compaction/context/index.js';
import { toolResultText } from '../../compaction/render.js';
import type { Block, MessageKind, NativeClip, Role } from '../../compaction/types.js';
import { ANTHROPIC_COMPACTION_BETA } from '../../llm/native-port.js';
import { itemType, RESPONSES_COMPACTION_TYPES } from './provider-clip.js';
import { inputItemsOf } from './responses-items.js';
import { type GatewayWire, historyField } from './wire.js';

type Json = Record<string, unknown>;

/** One active row of the conversation, as the gateway reads it (store.ts). */
export interface ActiveRow {
  seq: number;
  kind: MessageKind;
  role: Role;
  /** its position in the client's history, for rows the gateway stored; null for others (the clip-archive, API appends) */
  position: number | null;
  /** a compaction rewrote it in place (masked or truncated): its stored content differs from the client's */
  rewritten: boolean;
  /** read only for rows that are not sent as the client's own message */
  content: Block[] | null;
  /** a clip-archive of strategy native (SPEC §5.10) */
  native?: NativeClip;
}

/**
 * The upstream request: the client's own body with `messages` (and for Anthropic `system`)
 * replaced by the conversation's context. Messages compactd still holds as the client sent
 * them are forwarded as the client's own objects (its `cache_control` markers, thinking
 * signatures and fields compactd does not keep included); the archived prefix becomes the
 * clip-archive; rewritten messages are sent as compactd holds them. Everything else in the
 * body (model, tools, parameters, metadata) is untouched and keeps its place, so between two
 * compactions the serialized prefix of the request is the same from one request to the next.
 */
export function buildUpstreamBody(
  provider: GatewayWire,
  body: Json,
  start: number,
  history: readonly unknown[],
  rows: readonly ActiveRow[],
): Json {
  if (provider === 'responses') return responsesBody(body, start, history, rows);
  return provider === 'anthropic' ? anthropicBody(body, start, history, rows) : openAIBody(body, start, history, rows);
}

/**
 * Whether an upstream body built by `buildUpstreamBody` is the client's body: every field the
 * same value and every message the client's own object, in its order (no clip-archive, no
 * rewritten or dropped message). Then the client's bytes can be forwarded as they came.
 */
export function isClientBody(upstream: Json, body: Json, field: 'messages' | 'input' = 'messages'): boolean {
  const keys = Object.keys(upstream);
  if (keys.length !== Object.keys(body).length) return false;
  for (const key of keys) if (key !== field && upstream[key] !== body[key]) return false;
  const sent = upstream[field];
  const own = body[field];
  if (!Array.isArray(sent) || !Array.isArray(own) || sent.length !== own.length) return false;
  return sent.every((message, index) => message === own[index]);
}

function textOf(content: readonly Block[] | null): string {
  return (content ?? [])
    .map((b) => (b.type === 'text' ? b.text : ''))
    .filter((t) => t.trim() !== '')
    .join('\n\n');
}

function anthropicBody(body: Json, start: number, history: readonly unknown[], rows: readonly ActiveRow[]): Json {
  const systemParts: string[] = [];
  const clientMessages = body['messages'] as unknown[];
  // what the client sends before a provider's compaction block (provider-clip.ts) goes as sent
  const messages: Json[] = clientMessages.slice(0, start) as Json[];
  // the client's own turns are never merged with each other: only a turn compactd adds (the
  // clip-archive as a user turn, a rewritten message) joins a neighbour of the same role
  const own = new Set<Json>(messages);
  const push = (message: Json, original: boolean) => {
    const last = messages[messages.length - 1];
    if (last && last['role'] === message['role'] && !(original && own.has(last))) messages[messages.length - 1] = mergeTurns(last, message);
    else {
      messages.push(message);
      if (original) own.add(message);
    }
  };
  let opening: Json | null = null;
  for (const row of rows) {
    const original = row.position === null || row.rewritten ? undefined : history[row.position];
    if (original !== undefined) {
      push(original as Json, true);
      continue;
    }
    if (row.kind === 'clip_archive' && row.native && opensFor(row.native, 'anthropic', body['model'])) {
      // the provider's own compaction opens the messages; compactd's state goes to the system prompt
      opening = row.native.compaction.item;
      if (row.native.state !== '') systemParts.push(row.native.state);
      continue;
    }
    if (row.role === 'system') {
      const text = textOf(row.content);
      if (text !== '') systemParts.push(text);
      continue;
    }
    push({ role: row.role === 'assistant' ? 'assistant' : 'user', content: row.content ?? [] }, false);
  }
  // an archived prefix may leave an assistant turn first; the client's own first turn stays as it is
  if (messages[0]?.['role'] === 'assistant' && messages[0] !== clientMessages[0])
    messages.unshift({ role: 'user', content: [{ type: 'text', text: CONTEXT_OPENING_USER_TURN }] });
  // one compaction block per request: a client that sent its own keeps it, and compactd's is left out
  if (opening && !messages.some((m) => asBlocks(m['content']).some((b) => (b as Json | null)?.['type'] === 'compaction')))
    openWithCompactionBlock(messages, opening);
  const compacted =
    systemParts.length === 0
      ? { ...body, messages }
      : { ...body, system: systemWithText(body['system'], systemParts.join('\n\n')), messages };
  const rewritten = systemParts.length > 0 || messages.length !== clientMessages.length || messages.some((m, i) => m !== clientMessages[i]);
  return rewritten ? withCacheBreakpoint(compacted, body) : compacted;
}

/**
 * SPEC §5.10: between two compactions the context compactd serves only grows, so its prefix is
 * worth caching. A compacted request whose client marks no cache breakpoint at all gets the
 * top-level one (the provider marks the last block): the next request reads this one's prefix
 * at a tenth of the price instead of paying it in full. A client that places its own keeps
 * them, untouched (at most four per request).
 */
function withCacheBreakpoint(upstream: Json, client: Json): Json {
  // only a context compactd rewrote: a client's own body is forwarded as it sent it
  if (
    client['cache_control'] !== undefined ||
    marksCache(client['tools']) ||
    marksCache(client['system']) ||
    marksCache(client['messages'])
  )
    return upstream;
  return { ...upstream, cache_control: { type: 'ephemeral' } };
}

/** Whether a tools list, a system prompt or messages carry a `cache_control` marker anywhere. */
function marksCache(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  return value.some((entry) => {
    if (typeof entry !== 'object' || entry === null) return false;
    const record = entry as Json;
    return record['cache_control'] !== undefined || marksCache(record['content']);
  });
}

/** A native clip goes as its provider's item only to a request of that provider, for the model that made it. */
function opensFor(native: NativeClip, provider: NativeClip['compaction']['provider'], model: unknown): boolean {
  return native.compaction.provider === provider && native.compaction.model === model;
}

/**
 * The `anthropic-beta` value for an upstream request: the client's, plus the compaction beta
 * when the request opens with a signed compaction block (Anthropic refuses the block without it).
 */
export function withCompactionBeta(upstream: Json, clientBeta: string | undefined): string | undefined {
  const first = (upstream['messages'] as Json[] | undefined)?.[0];
  const block = Array.isArray(first?.['content']) ? (first['content'] as Json[])[0] : undefined;
  if (!block || block['type'] !== 'compaction' || block['signature'] == null) return clientBeta;
  const betas = (clientBeta ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
  return betas.includes(ANTHROPIC_COMPACTION_BETA) ? clientBeta : [...betas, ANTHROPIC_COMPACTION_BETA].join(',');
}

const asBlocks = (content: unknown): unknown[] =>
  Array.isArray(content) ? content : typeof content === 'string' ? [{ type: 'text', text: content }] : [];

/** Two turns of one role (the clip-archive as a user turn before a kept user turn): one turn, tool results first. */
function mergeTurns(a: Json, b: Json): Json {
  const blocks = [...asBlocks(a['content']), ...asBlocks(b['content'])];
  const isResult = (block: unknown) => typeof block === 'object' && block !== null && (block as Json)['type'] === 'tool_result';
  return { role: a['role'], content: [...blocks.filter(isResult), ...blocks.filter((block) => !isResult(block))] };
}

/**
 * A Responses request: `input` rebuilt like `messages` (the leading developer items and what
 * precedes a provider's compaction item as sent, the client's own items, the clip-archive as a
 * developer message in its place); `instructions`, tools and parameters untouched. A native
 * clip made by this request's model goes as OpenAI's compaction item, exactly as returned, with
 * compactd's state beside it — unless the client sends an item of its own (one per request).
 */
function responsesBody(body: Json, start: number, history: readonly unknown[], rows: readonly ActiveRow[]): Json {
  const clientItems = inputItemsOf(body);
  const input: unknown[] = clientItems.slice(0, start);
  const clientCompacted = clientItems.some((item) => RESPONSES_COMPACTION_TYPES.has(itemType(item)));
  for (const row of rows) {
    const original = row.position === null || row.rewritten ? undefined : history[row.position];
    if (original !== undefined) input.push(original);
    else if (row.kind === 'clip_archive' && row.native && !clientCompacted && opensFor(row.native, 'openai', body['model']))
      input.push(...nativeResponsesItems(row.native));
    else input.push(...responsesItemsOf({ role: row.role, content: row.content ?? [] }));
  }
  return { ...body, [historyField('responses')]: input };
}

function openAIBody(body: Json, start: number, history: readonly unknown[], rows: readonly ActiveRow[]): Json {
  const all = body['messages'] as unknown[];
  const messages: unknown[] = all.slice(0, start);
  for (const row of rows) {
    const original = row.position === null || row.rewritten ? undefined : history[row.position];
    if (original !== undefined) messages.push(original);
    else messages.push(...openAIMessagesOf(row));
  }
  return { ...body, messages };
}

/** A row compactd holds in its own form (the clip-archive, a rewritten tool result) as OpenAI messages. */
function openAIMessagesOf(row: ActiveRow): Json[] {
  const content = row.content ?? [];
  const results = content.filter((b) => b.type === 'tool_result');
  if (results.length > 0) {
    return results.map((b) => ({
      role: 'tool',
      tool_call_id: b.tool_use_id,
      content: toolResultText(b),
    }));
  }
  const calls = content.filter((b) => b.type === 'tool_use');
  const text = textOf(content);
  if (row.role === 'assistant' && calls.length > 0) {
    return [
      {
        role: 'assistant',
        content: text === '' ? null : text,
        tool_calls: calls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: JSON.stringify(c.input ?? {}) },
        })),
      },
    ];
  }
  return [{ role: row.role === 'tool' ? 'user' : row.role, content: text === '' ? '[empty]' : text }];
}

/**
 * The rows to build a request's context from, when the client's history shares its first
 * `shared` messages with the stored one: the stored rows up to the first one past that shared
 * prefix (an answer the client has not sent back yet, turns another request of the same
 * conversation stored meanwhile), then the client's own messages from `shared` on. So the
 * context never holds a stored turn the client did not send (nor an empty stand-in for it), and
 * count_tokens counts what the completion route sends.
 */
export function contextRows(rows: readonly ActiveRow[], shared: number, historyLength: number): ActiveRow[] {
  const cut = rows.findIndex((row) => row.position !== null && row.position >= shared);
  const kept = cut === -1 ? [...rows] : rows.slice(0, cut);
  const last = kept.at(-1)?.seq ?? 0;
  for (let position = shared; position < historyLength; position += 1) {
    kept.push({ seq: last + 1 + position - shared, kind: 'message', role: 'user', position, rewritten: false, content: null });
  }
  return kept;
}
