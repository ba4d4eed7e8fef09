/**
 * Data shapes shared by the functional core and the adapters around it.
 * Messages are stored normalized as Anthropic-style content blocks (SPEC §4, §6.1).
 */

export type Role = 'system' | 'user' | 'assistant' | 'tool';
export const ROLES: readonly Role[] = ['system', 'user', 'assistant', 'tool'];

export type MessageKind = 'message' | 'clip_archive';

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

/** An image is stored by reference only (url or media type + base64 data, kept as given). */
export interface ImageBlock {
  type: 'image';
  source: Record<string, unknown>;
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string | Array<TextBlock | ImageBlock>;
  is_error?: boolean;
}

export type Block = TextBlock | ToolUseBlock | ToolResultBlock | ImageBlock;

/** A message after normalization, before it has a seq (what ingestion produces). */
export interface NormalizedMessage {
  role: Role;
  content: Block[];
  name?: string;
  usage?: { inputTokens?: number; outputTokens?: number };
  metadata?: Record<string, unknown>;
  /** pinned at append: never archived, kept verbatim in the context (SPEC §5.6a) */
  pinned?: boolean;
}

/**
 * What the planner's scoring reads of a message's content, computed where the content lives
 * (in SQL) so a plan never loads the whole history's content.
 */
export interface MessageFeatures {
  /** a user message carrying typed text, not only tool results */
  userText: boolean;
  /** a user message whose text holds a question mark */
  question: boolean;
  /** characters of the message's text (scoring's length signal) */
  chars: number;
  /** indexes into the policy's scoring keywords that the message's text matches */
  keywords: number[];
  /** image blocks of a user message's own content (not inside tool results): what `keepImages` counts */
  userImages?: number;
}

/**
 * A message of the active history as the core sees it. The planner gets it with `features`
 * and, except for the few messages Tier 1/2 may rewrite, empty `content`; every other reader
 * gets the content.
 */
export interface HistoryMessage {
  seq: number;
  role: Role;
  kind: MessageKind;
  content: Block[];
  features?: MessageFeatures;
  tokens: number;
  /** tool_use ids this message opens */
  toolUseIds: string[];
  /** tool_use ids this message answers (tool_result blocks) */
  toolResultIds: string[];
  /** metadata.meta as stored (meta-turns.ts): true for a meta turn, in the history but never the user's request */
  meta?: boolean;
  /** pinned by the client (SPEC §5.6a): its unit is never archived nor rewritten */
  pinned?: boolean;
}

/**
 * A provider's own compaction item (SPEC §5.10, strategy `native`), kept exactly as returned:
 * Anthropic's `{type: "compaction", content, signature}` block, OpenAI's opaque `{type:
 * "compaction", encrypted_content}` item. It opens the context only for the provider and the
 * model that made it; every other reader gets compactd's own clip-archive.
 */
export interface ProviderCompaction {
  provider: 'anthropic' | 'openai';
  model: string;
  /** the beta header every request carrying the item needs, if any */
  beta: string | null;
  item: Record<string, unknown>;
}

/** A clip-archive of strategy native as a context reads it: the provider's item, and compactd's state (the ledger) that goes beside it. */
export interface NativeClip {
  compaction: ProviderCompaction;
  state: string;
}

/** Counts tokens of a text; supplied by the shell (gpt-tokenizer) so the core stays pure. */
export type CountTokens = (text: string) => number;

/** A chat message of a summarizer request: roles preserved, content already rendered as text. */
export interface SummarizeMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * The structured request a summarizer receives (SPEC §5.4). Adapters map it onto their
 * provider's wire format: Anthropic merges system-role messages into `system`, OpenAI
 * passes them through in order.
 */
export interface SummarizeRequest {
  /** The configured or default summarizer system prompt. */
  system: string;
  /** Previous-summary context (system role), the chunk's messages, then the final user directive. */
  messages: SummarizeMessage[];
  /** Output budget for the summary. */
  maxOutputTokens: number;
  /**
   * How many leading `messages` are the same in every request of its kind (the instructions):
   * with the system prompt they are the prefix a provider's prompt cache can share between
   * the calls of a job.
   */
  sharedPrefix?: number;
}
