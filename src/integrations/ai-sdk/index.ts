/**
 * `compactd/ai-sdk`: keeps a Vercel AI SDK agent's conversation in compactd.
 *
 *   const session = compactdSession({ client: createClient({ baseUrl, apiKey }), conversationId: 'conv-1', system });
 *   const result = await generateText({
 *     model, system, tools, messages, stopWhen: stepCountIs(8),
 *     prepareStep: session.prepareStep,
 *     onStepFinish: session.onStepFinish,
 *   });
 *   messages.push(...result.response.messages);
 *
 * `prepareStep` appends the messages compactd has not stored yet (the system prompt first)
 * and hands the step compactd's ready context (the clip-archive in `system` + the kept
 * messages) instead of the raw history; `onStepFinish` appends the step's answer with the
 * provider-reported usage, so compactd's auto trigger sees the real context size. Compaction
 * runs in compactd's background: a step never waits for one, the next step after it ends
 * sees the compacted context. When compactd cannot be reached the step goes ahead with the
 * SDK's own messages, unchanged, and `onError` is told.
 *
 * Messages are keyed by their position in the conversation and their content: pass the
 * whole history each call (as above, the SDK's own pattern), and each is stored once however
 * often it is passed, by however many processes. One session per conversation, one call at
 * a time.
 */
import type { LanguageModelUsage, ModelMessage } from 'ai';

import type { CompactdClient } from '../../client/index.js';
import {
  type ConversationSettings,
  createConversationSync,
  messageKey,
  type PendingMessage,
  type SyncStage,
} from '../conversation-sync.js';
import { fromCompactdContext, toCompactdMessage } from './messages.js';

export { fromCompactdContext, toCompactdMessage } from './messages.js';

export interface CompactdSessionOptions extends ConversationSettings {
  client: CompactdClient;
  conversationId: string;
  /** the `system` given to generateText/streamText, stored as the conversation's first message */
  system?: string | undefined;
  /** told of every failure to reach compactd (the step then goes ahead with the SDK's own messages) */
  onError?: (error: unknown, stage: SyncStage) => void;
  /** told when an append started a compaction */
  onCompaction?: (job: { id: string; status: string }, conversationId: string) => void;
}

/** What `prepareStep` returns: the step's messages and system prompt, or nothing to keep the SDK's own. */
export interface PreparedStep {
  system?: string;
  messages?: ModelMessage[];
}

export interface CompactdSession {
  prepareStep(options: { messages: ModelMessage[]; stepNumber: number }): Promise<PreparedStep>;
  onStepFinish(step: { usage: LanguageModelUsage; response: { messages: ModelMessage[] } }): Promise<void>;
  /** Appends whatever of `messages` compactd has not stored yet; true when all are stored. */
  sync(messages: readonly ModelMessage[]): Promise<boolean>;
}

export function compactdSession(options: CompactdSessionOptions): CompactdSession {
  const id = options.conversationId;
  const sync = createConversationSync({ ...options, keyPrefix: 'ai-sdk' });
  /** the messages the current call started with (prepareStep of step 0) */
  let callMessages: ModelMessage[] = [];

  function pendingOf(messages: readonly ModelMessage[], usage?: { at: number; inputTokens: number | undefined }): PendingMessage[] {
    const pending: PendingMessage[] = [];
    if (options.system !== undefined && options.system.trim() !== '')
      pending.push({ key: 'system', message: { role: 'system', content: options.system } });
    messages.forEach((message, index) => {
      const stored = toCompactdMessage(message);
      if (!stored) return;
      const inputTokens = usage?.at === index ? usage.inputTokens : undefined;
      pending.push({ key: messageKey(index, stored), message: stored, inputTokens });
    });
    return pending;
  }

  return {
    async prepareStep({ messages, stepNumber }) {
      if (stepNumber === 0) callMessages = messages;
      // Only a conversation holding every message gives a context worth sending instead of the SDK's own.
      if (!(await sync.sync(id, pendingOf(messages)))) return {};
      const context = await sync.context(id);
      if (context === null) return {};
      return { ...(context.system === undefined ? {} : { system: context.system }), messages: fromCompactdContext(context.messages) };
    },
    async onStepFinish(step) {
      // The step's response messages accumulate over the call: the last assistant one is this step's answer.
      const all = [...callMessages, ...step.response.messages];
      const answerAt = all.findLastIndex((m) => m.role === 'assistant');
      await sync.sync(id, pendingOf(all, { at: answerAt, inputTokens: step.usage.inputTokens }));
    },
    sync: (messages) => sync.sync(id, pendingOf(messages)),
  };
}
