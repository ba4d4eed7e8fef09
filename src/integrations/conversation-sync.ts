import { type AnthropicContext, type CompactdClient, type InputMessage, isCompactdError } from '../client/index.js';

/**
 * What the framework adapters share: keep a compactd conversation in step with an agent's
 * messages, and read its ready context. Every message is appended once, in order, under an
 * Idempotency-Key derived from its place in the history and its content (`messageKey`), so a
 * retry, a second process or a restart that replays the same history stores nothing twice. Nothing here throws: a
 * failure is reported to `onError` and the caller falls back to the agent's own history.
 */

export interface ConversationSettings {
  /** the agent's model, e.g. `claude-sonnet-4-5` (sets compactd's context limit for known models) */
  model?: string | undefined;
  contextLimit?: number | undefined;
  /** compaction policy of a new conversation (auto trigger, keepRecent, schedule, …) */
  policy?: Record<string, unknown> | undefined;
}

export type SyncStage = 'create' | 'append' | 'context';

export interface SyncOptions extends ConversationSettings {
  client: CompactdClient;
  /** prefix of the Idempotency-Keys, one per adapter */
  keyPrefix: string;
  onError?: ((error: unknown, stage: SyncStage) => void) | undefined;
  /** told when an append started a compaction (compactd's auto trigger) */
  onCompaction?: ((job: { id: string; status: string }, conversationId: string) => void) | undefined;
}

/** One message to store, with a key that is stable for it across processes. */
export interface PendingMessage {
  key: string;
  message: InputMessage;
  /** provider-reported input tokens of the model call that produced it */
  inputTokens?: number | undefined;
}

const MAX_KEY_LENGTH = 255;

/** FNV-1a, twice (two seeds): a short stable digest for keys too long for the header. */
export function digest(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

export function idempotencyKey(prefix: string, conversationId: string, messageKey: string): string {
  const key = `${prefix}:${conversationId}:${messageKey}`;
  return key.length <= MAX_KEY_LENGTH ? key : `${prefix}:${digest(key)}`;
}

/**
 * The key of the message at `index` of an agent's history: its position and its content
 * (usage left out: an app that keeps its own copy of the history may drop it). Stable however
 * the history is handed back — the returned state, a checkpointer, the app's own store, a
 * second process — as long as it is handed back whole, oldest first.
 */
export function messageKey(index: number, message: InputMessage): string {
  return `m${index}-${digest(JSON.stringify([message.role, message.content, message.name ?? null]))}`;
}

export interface ConversationSync {
  /**
   * Creates the conversation unless it exists, then appends the pending messages not yet
   * stored, in order, stopping at the first failure. True when every one is stored (only
   * then is compactd's context complete enough to send).
   */
  sync(conversationId: string, pending: readonly PendingMessage[]): Promise<boolean>;
  /** The ready-to-send context, or null when it could not be read. */
  context(conversationId: string): Promise<AnthropicContext | null>;
}

/**
 * Conversations whose stored keys a process remembers; past this the least recently used is
 * forgotten (its next sync re-sends its messages, and their Idempotency-Keys keep them single).
 */
const MAX_TRACKED_CONVERSATIONS = 1_000;

export function createConversationSync(options: SyncOptions): ConversationSync {
  const { client } = options;
  const created = new Set<string>();
  const stored = new Map<string, Set<string>>();

  function storedKeys(id: string): Set<string> {
    const keys = stored.get(id) ?? new Set<string>();
    // re-inserted: a Map iterates in insertion order, so the first entry is the least recently used
    stored.delete(id);
    stored.set(id, keys);
    if (stored.size > MAX_TRACKED_CONVERSATIONS) {
      const oldest = stored.keys().next().value as string;
      stored.delete(oldest);
      created.delete(oldest);
    }
    return keys;
  }
  const report = (error: unknown, stage: SyncStage) => options.onError?.(error, stage);

  async function ensureConversation(id: string): Promise<boolean> {
    if (created.has(id)) return true;
    try {
      await client.createConversation({
        id,
        ...(options.model === undefined ? {} : { model: options.model }),
        ...(options.contextLimit === undefined ? {} : { contextLimit: options.contextLimit }),
        ...(options.policy === undefined ? {} : { policy: options.policy }),
      });
    } catch (error) {
      if (!isCompactdError(error, 'CONVERSATION_EXISTS')) {
        report(error, 'create');
        return false;
      }
    }
    created.add(id);
    return true;
  }

  async function appendOne(id: string, item: PendingMessage): Promise<boolean> {
    const inputTokens = item.inputTokens;
    const message = inputTokens === undefined ? item.message : { ...item.message, usage: { ...item.message.usage, inputTokens } };
    try {
      const result = await client.appendMessages(
        id,
        { messages: [message], ...(inputTokens === undefined ? {} : { usage: { inputTokens } }) },
        { idempotencyKey: idempotencyKey(options.keyPrefix, id, item.key) },
      );
      if (result.compaction) options.onCompaction?.(result.compaction, id);
      return true;
    } catch (error) {
      // The same key with another body: this message was stored before in another shape (an edited history); keep it.
      if (isCompactdError(error, 'IDEMPOTENCY_KEY_REUSED')) return true;
      report(error, 'append');
      return false;
    }
  }

  return {
    async sync(id, pending) {
      if (!(await ensureConversation(id))) return false;
      const keys = storedKeys(id);
      for (const item of pending) {
        if (keys.has(item.key)) continue;
        if (!(await appendOne(id, item))) return false;
        keys.add(item.key);
      }
      return true;
    },
    async context(id) {
      try {
        return await client.getContext(id);
      } catch (error) {
        report(error, 'context');
        return null;
      }
    },
  };
}
