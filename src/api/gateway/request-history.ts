import type { Db } from '../../db/client.js';
import type { ConversationRow } from '../../db/repos/conversations.js';
import { AppError } from '../../lib/errors.js';
import { historyKey, historyStart, storableMessage } from './history.js';
import { keysOfHistory, rememberKeys } from './key-memo.js';
import { clipAlignedKeys, clipPosition, itemType, lastProviderClip, PROVIDER_COMPACTION_KEY } from './provider-clip.js';
import { inputItemsOf } from './responses-items.js';
import { type ClientHistory, storedKeysOf } from './store.js';
import { type GatewayWire, historyField } from './wire.js';

/**
 * A gateway request's history: where it starts in the body, and its keys (history.ts) once
 * the conversation is known.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

export interface ParsedRequest {
  body: Json;
  /** `messages`, or a Responses request's `input` as items */
  messages: unknown[];
  /** where the stored history starts in `messages`: after the agent's leading instructions, or at a provider's compaction */
  start: number;
  /** `messages` from `start` on (a trailing `compaction_trigger` is a request to the provider, not a turn) */
  history: unknown[];
  /** the history opens with a provider's compaction (provider-clip.ts) */
  clip: boolean;
}

export interface KeyedRequest extends ParsedRequest {
  /** the history key of each position of `history` */
  keys: string[];
  /**
   * With a provider clip, `history` is positioned as stored: the clip at the position the stored
   * history holds it (or will), the positions before it empty (the provider compacted them)
   */
  clipAt?: number;
}

/** The request's history, or a 400 naming the field. */
export function parseRequest(wire: GatewayWire, raw: unknown): ParsedRequest {
  if (!isObject(raw)) throw new AppError('INVALID_BODY', 'the body must be a JSON object', { status: 400, field: 'body' });
  const field = historyField(wire);
  const given = raw[field];
  if (wire === 'responses' ? typeof given !== 'string' && !Array.isArray(given) : !Array.isArray(given)) {
    const shape = wire === 'responses' ? 'a string or an array of input items' : 'an array';
    throw new AppError('INVALID_BODY', `${field}: must be ${shape}`, { status: 400, field: `body.${field}` });
  }
  const messages = wire === 'responses' ? inputItemsOf(raw) : (given as unknown[]);
  const lead = historyStart(wire, messages);
  const clip = lastProviderClip(wire, messages.slice(lead));
  const start = clip === null ? lead : lead + clip;
  const end =
    wire === 'responses' && messages.length > start && itemType(messages.at(-1)) === 'compaction_trigger'
      ? messages.length - 1
      : messages.length;
  return { body: raw, messages, start, history: messages.slice(start, end), clip: clip !== null };
}

/**
 * The request's history keyed for `conversation`. Without a provider clip, the messages its
 * thread's last request already carried are not keyed again (key-memo.ts; memos are the
 * tenant's own and per thread). With one, the history is aligned on the clip: its keys take
 * the positions from where the stored history holds the clip, after the stored (or clipped)
 * keys before it.
 */
export async function keyHistory(
  db: Db,
  wire: GatewayWire,
  parsed: ParsedRequest,
  memo: { tenantId: string; identityId: string; firstKey: string | null; weight: number },
  conversation: ConversationRow,
): Promise<KeyedRequest> {
  if (!parsed.clip) {
    const name = `${memo.tenantId}/${memo.identityId}/${memo.firstKey ?? ''}`;
    const keys = keysOfHistory(name, wire, parsed.history);
    rememberKeys(name, wire, parsed.history, keys, memo.weight);
    return { ...parsed, keys };
  }
  const stored = await storedKeysOf(db, conversation);
  const clipAt = clipPosition(stored, historyKey(0, storableMessage(wire, parsed.history[0])));
  const own = parsed.history.map((message, index) => historyKey(clipAt + index, storableMessage(wire, message)));
  const history = new Array<unknown>(clipAt).concat(parsed.history);
  return { ...parsed, history, keys: clipAlignedKeys(clipAt, own), clipAt };
}

/** The model and the beta header of the request a provider's compaction came with (compaction/types.ts `ProviderCompaction`). */
export interface CompactionOrigin {
  model: string;
  beta: string | null;
}

/** Anthropic's compaction beta among a request's `anthropic-beta` values (`compact-2026-09-04`), else null. */
export function compactionOriginOf(body: Json, headers: Record<string, string | string[] | undefined>): CompactionOrigin {
  const betas = [headers['anthropic-beta'] ?? []].flat().flatMap((value) => value.split(','));
  const beta = betas.map((value) => value.trim()).find((value) => value.startsWith('compact-')) ?? null;
  return { model: typeof body['model'] === 'string' ? body['model'] : '', beta };
}

/**
 * The client's history as the store reads it: its keys, each message's storable form on
 * demand (a provider's compaction typed with the model and beta it came with: stored, not
 * keyed, so the same item keys alike whatever the request), and the answer's messages after it.
 */
export function clientHistory(
  wire: GatewayWire,
  keyed: Pick<KeyedRequest, 'history' | 'keys' | 'clipAt'>,
  options: { answer?: readonly Json[]; keys?: readonly string[]; autoCompact?: boolean; origin?: CompactionOrigin } = {},
): ClientHistory {
  const { history } = keyed;
  const typed = (storable: Json): Json => {
    const compaction = (storable['metadata'] as Json | undefined)?.[PROVIDER_COMPACTION_KEY] as Json | undefined;
    if (compaction === undefined || options.origin === undefined) return storable;
    return {
      ...storable,
      metadata: { ...(storable['metadata'] as Json), [PROVIDER_COMPACTION_KEY]: { ...compaction, ...options.origin } },
    };
  };
  return {
    keys: options.keys ?? keyed.keys,
    storable: (position) =>
      typed(position >= history.length ? (options.answer?.[position - history.length] ?? {}) : storableMessage(wire, history[position])),
    ...(keyed.clipAt === undefined ? {} : { clipAt: keyed.clipAt }),
    ...(options.autoCompact === undefined ? {} : { autoCompact: options.autoCompact }),
  };
}
