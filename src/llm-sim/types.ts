import type { PromptLayout } from './prompt-cache.js';

/** Provider-neutral view of a completion call inside llm-sim. */

export type SimApi = 'anthropic' | 'openai';

/** The simulated routes that answer a model call. */
export type SimEndpoint = '/v1/messages' | '/v1/chat/completions' | '/v1/responses' | '/v1/responses/compact';

/**
 * A provider compaction a call asks for: Anthropic's on-demand `compaction: {type: "summarize"}`
 * (`summarize`), its threshold mode (`compact_20260112` in `context_management.edits`),
 * OpenAI's `POST /v1/responses/compact` (`responses_compact`) and a Responses request ending
 * in a `compaction_trigger` item (`compaction_trigger`).
 */
export type SimCompactionKind = 'summarize' | 'compact_20260112' | 'responses_compact' | 'compaction_trigger';

export interface SimMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

export interface SimRequest {
  api: SimApi;
  model: string;
  /** the system prompt (Anthropic `system`) first, then the messages in order */
  messages: SimMessage[];
  maxTokens: number;
  stream: boolean;
  /** OpenAI `stream_options.include_usage` */
  includeUsage: boolean;
  endpoint: SimEndpoint;
  /** what the prompt cache hashes, in order; `messages[i]` is the layout of `messages[i]` above */
  layout: PromptLayout;
  /** the provider compaction the request asks for (threshold mode: only when its input is over the trigger) */
  compaction?: SimCompactionAsk;
  /** request fields the answer repeats (the Responses API echoes instructions, tools, …) */
  echo?: Record<string, unknown>;
}

export interface SimCompactionAsk {
  kind: SimCompactionKind;
  /** replaces the default summarization prompt (none: the sim's own) */
  instructions: string | null;
  /** compact_20260112: the answer compacts when the input is over this many tokens */
  triggerTokens?: number;
  /** compact_20260112 `pause_after_compaction`: answer the compaction block alone */
  pause?: boolean;
  /** OpenAI: the user messages the compaction output keeps, as output items */
  kept?: Array<Record<string, unknown>>;
}

export interface SimUsage {
  /** input not read from nor written to the cache */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** the part of cacheWriteTokens written with a one-hour TTL (Anthropic `ttl: "1h"`) */
  cacheWrite1hTokens?: number;
}

/** The compaction an answer carries, rendered by each API in its own shape. */
export interface SimCompactionOutput {
  kind: SimCompactionKind;
  /** the summary; null when the compaction failed (an `empty`/`truncated` fault on an Anthropic compaction) */
  content: string | null;
  /** Anthropic on-demand: the signature over `content` */
  signature?: string | null;
  /** Anthropic threshold block and OpenAI compaction item: the opaque part */
  encryptedContent?: string | null;
  /** OpenAI: the kept user messages, output before the compaction item */
  kept?: Array<Record<string, unknown>>;
  /** the answer is the compaction alone (stop reason `compaction`), no text follows it */
  alone: boolean;
}

/** What the simulated model answers, before it is rendered in a wire format. */
export interface SimAnswer {
  id: string;
  model: string;
  text: string;
  stop: 'end' | 'length' | 'compaction';
  /** what the response reports at the top level */
  usage: SimUsage;
  /** Anthropic `usage.iterations` of an answer that compacted, in order */
  iterations?: Array<SimUsage & { type: 'compaction' | 'message' }>;
  compaction?: SimCompactionOutput;
}

/** A request the sim refuses, rendered by each API in its own error shape. */
export class SimRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: 'invalid_request' | 'context_length_exceeded' = 'invalid_request',
    /** the offending field, for APIs that name it (OpenAI `param`) */
    readonly param: string | null = null,
    /** OpenAI's error `code` (`invalid_encrypted_content`, `previous_response_not_found`, …) */
    readonly errorCode: string | null = null,
  ) {
    super(message);
  }
}

/** Renders the text of Anthropic/OpenAI content: a string, or an array of blocks/parts. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map(blockText).join('\n');
}

/** The text one block or part counts for (its pieces joined by newlines make `contentText`). */
export function blockText(block: unknown): string {
  if (typeof block === 'string') return block;
  if (typeof block !== 'object' || block === null) return '';
  const b = block as Record<string, unknown>;
  if (typeof b['text'] === 'string') return b['text'];
  if (b['type'] === 'tool_use') return `${String(b['name'])} ${JSON.stringify(b['input'] ?? {})}`;
  if (b['type'] === 'tool_result') return contentText(b['content']);
  // a provider compaction block stands for the conversation it summarizes: its summary counts
  if (b['type'] === 'compaction' && typeof b['content'] === 'string') return b['content'];
  return '';
}
