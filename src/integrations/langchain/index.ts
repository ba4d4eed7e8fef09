/**
 * `compactd/langchain`: a LangChain v1 agent middleware that keeps the agent's conversation
 * in compactd, in place of `summarizationMiddleware`.
 *
 *   const agent = createAgent({
 *     model, tools, systemPrompt,
 *     middleware: [compactdMiddleware({ client: createClient({ baseUrl, apiKey }), model: 'claude-sonnet-4-5' })],
 *   });
 *   await agent.invoke({ messages }, { configurable: { thread_id: 'conv-1' } });
 *
 * Around every model call it appends the agent's messages compactd has not stored yet (the
 * system prompt first, the model's answer with its usage right after), then calls the model
 * with compactd's ready context (the clip-archive in the system prompt + the kept messages)
 * instead of the raw history. The agent's own state is never rewritten. Compaction is
 * compactd's to decide (its auto trigger on append, or the idle schedule) and runs in the
 * background: a model call never waits for one, the next call after it ends sees the
 * compacted context. When compactd cannot be reached, the call goes to the model with the
 * agent's own history, unchanged, and `onError` is told; the history is never replaced by
 * an error.
 */
import type { AIMessage, BaseMessage } from '@langchain/core/messages';
import { type AgentMiddleware, createMiddleware } from 'langchain';

import type { CompactdClient } from '../../client/index.js';
import {
  type ConversationSettings,
  createConversationSync,
  messageKey,
  type PendingMessage,
  type SyncStage,
} from '../conversation-sync.js';
import { fromCompactdContext, inputTokensOf, toCompactdMessage } from './messages.js';

export { fromCompactdContext, toCompactdMessage } from './messages.js';

export interface CompactdMiddlewareOptions extends ConversationSettings {
  client: CompactdClient;
  /**
   * The compactd conversation of a run: a fixed id, or a function of the run's thread id.
   * Default: the run's `configurable.thread_id`.
   */
  conversationId?: string | ((threadId: string | undefined) => string | undefined);
  /** told of every failure to reach compactd (the model call then goes ahead with the agent's own history) */
  onError?: (error: unknown, stage: SyncStage) => void;
  /** told when an append started a compaction */
  onCompaction?: (job: { id: string; status: string }, conversationId: string) => void;
}

/** The part of langchain's ModelRequest this middleware reads and rewrites. */
interface ModelRequestLike {
  messages: BaseMessage[];
  systemPrompt: string;
  runtime: { configurable?: { thread_id?: string } };
}
type ModelHandler<R extends ModelRequestLike> = (request: R) => Promise<AIMessage>;

/**
 * langchain's own signature infers the agent's state from every middleware's schemas; this
 * middleware has none, and the narrow signature keeps the type-check fast.
 */
const middlewareWithModelHook = createMiddleware as unknown as (config: {
  name: string;
  wrapModelCall: <R extends ModelRequestLike>(request: R, handler: ModelHandler<R>) => Promise<AIMessage>;
}) => AgentMiddleware;

export class NoConversationIdError extends Error {
  constructor() {
    super('compactd middleware: no conversation id (give `conversationId`, or run the agent with configurable.thread_id)');
    this.name = 'NoConversationIdError';
  }
}

export function compactdMiddleware(options: CompactdMiddlewareOptions): AgentMiddleware {
  const sync = createConversationSync({ ...options, keyPrefix: 'langchain' });

  function conversationOf(request: ModelRequestLike): string | undefined {
    const threadId = request.runtime.configurable?.thread_id;
    const id = options.conversationId;
    return typeof id === 'function' ? id(threadId) : (id ?? threadId);
  }

  /** The system prompt, then the agent's messages, each keyed by its place in the history and its content. */
  function pendingOf(request: ModelRequestLike): PendingMessage[] {
    const pending: PendingMessage[] = [];
    if (request.systemPrompt.trim() !== '') pending.push({ key: 'system', message: { role: 'system', content: request.systemPrompt } });
    request.messages.forEach((message, index) => {
      const stored = toCompactdMessage(message);
      if (stored) pending.push({ key: messageKey(index, stored), message: stored, inputTokens: inputTokensOf(message) });
    });
    return pending;
  }

  return middlewareWithModelHook({
    name: 'CompactdMiddleware',
    wrapModelCall: async (request, handler) => {
      const conversationId = conversationOf(request);
      if (conversationId === undefined) {
        options.onError?.(new NoConversationIdError(), 'create');
        return handler(request);
      }
      const complete = await sync.sync(conversationId, pendingOf(request));
      // Only a conversation holding every message gives a context worth sending instead of the agent's own.
      const context = complete ? await sync.context(conversationId) : null;
      const response = await handler(
        context === null ? request : { ...request, systemPrompt: context.system ?? '', messages: fromCompactdContext(context.messages) },
      );
      if (complete) {
        // The answer joins the history right after the messages of this call: the key it will have there next call.
        const stored = toCompactdMessage(response);
        if (stored)
          await sync.sync(conversationId, [
            { key: messageKey(request.messages.length, stored), message: stored, inputTokens: inputTokensOf(response) },
          ]);
      }
      return response;
    },
  });
}
