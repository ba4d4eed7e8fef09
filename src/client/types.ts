/**
 * Request and response types of the client, inferred from the service's own zod schemas.
 * Every import here is type-only: at run time the client loads no server code and no zod.
 */
import type { z } from 'zod';

import type {
  BatchMessagesResponseSchema,
  BatchSchema,
  ExportLineSchema,
  ListBatchesResponseSchema,
  SearchHitSchema,
  SearchResponseSchema,
} from '../api/schemas/batches.js';
import type { ProblemSchema } from '../api/schemas/common.js';
import type { ConversationSchema, CreateConversationBodySchema, UpdateConversationBodySchema } from '../api/schemas/conversations.js';
import type { JobSchema, ListJobsResponseSchema } from '../api/schemas/jobs.js';
import type {
  AppendResponseSchema,
  ContextResponseSchema,
  ListMessagesResponseSchema,
  StoredMessageSchema,
} from '../api/schemas/messages.js';
import type { ToolDefinitionSchema } from '../api/schemas/tools.js';
import type {
  ListDeliveriesQuerySchema,
  ListDeliveriesResponseSchema,
  WebhookBodySchema,
  WebhookDeliverySchema,
  WebhookSchema,
} from '../api/schemas/webhooks.js';
import type { Block, Role } from '../compaction/types.js';
import type { CompactionOptions } from '../queue/job-options.js';

export type { Block, Role, TextBlock, ToolResultBlock, ToolUseBlock } from '../compaction/types.js';

export type Problem = z.infer<typeof ProblemSchema>;
export type Conversation = z.infer<typeof ConversationSchema>;
export type CreateConversationRequest = z.input<typeof CreateConversationBodySchema>;
export type UpdateConversationRequest = z.input<typeof UpdateConversationBodySchema>;
export type AppendResult = z.infer<typeof AppendResponseSchema>;
export type StoredMessage = z.infer<typeof StoredMessageSchema>;
export type MessagePage = z.infer<typeof ListMessagesResponseSchema>;
export type JobStatus = z.infer<typeof JobSchema>['status'];
export type JobPage = Omit<z.infer<typeof ListJobsResponseSchema>, 'jobs'> & { jobs: Job[] };
export type Batch = z.infer<typeof BatchSchema>;
export type BatchPage = z.infer<typeof ListBatchesResponseSchema>;
export type BatchMessagesPage = z.infer<typeof BatchMessagesResponseSchema>;
export type ExportLine = z.infer<typeof ExportLineSchema>;
export type SearchHit = z.infer<typeof SearchHitSchema>;
export type SearchResult = z.infer<typeof SearchResponseSchema>;
export type Webhook = z.infer<typeof WebhookSchema>;
export type WebhookRequest = z.input<typeof WebhookBodySchema>;
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;
export type WebhookDeliveryPage = z.infer<typeof ListDeliveriesResponseSchema>;
export type WebhookDeliveryQuery = Partial<z.infer<typeof ListDeliveriesQuerySchema>>;

/**
 * The result of a completed job (SPEC §6.1). The schema keeps `result` an open record, so
 * the fields documented there are named here and anything newer stays reachable.
 */
export interface CompactionResult {
  tokensBefore: number;
  tokensAfter: number;
  messagesArchived: number;
  batchIds: string[];
  clipArchiveSeq: number | null;
  strategy?: string;
  llm?: {
    calls: number;
    inputTokens: number;
    outputTokens: number;
    cacheReadTokens: number;
    cacheWriteTokens: number;
    costUsd: number;
    models?: string[];
  };
  identifiers?: { found: number; total: number };
  fallbacks?: Array<{ step: string; reason: string | null }>;
  /** the follow-up `consolidate` job the commit recorded (more live batches than `maxLiveBatches`) */
  consolidationJobId?: string | null;
  /** on a consolidation: the batches it merged into `batchIds[0]` */
  absorbedBatchIds?: string[];
  /** the operator's instructions (policy `summaryInstructions`) its summarizer requests carried */
  operatorInstructions?: { text: string; chars: number };
  /** set once `revertJob` undid the compaction */
  revertedAt?: string;
  [key: string]: unknown;
}

/** The result of a `noop` job: why nothing was compacted (`reason` is a stable code). */
export interface NoopResult {
  reason: string;
  message?: string;
  tokensBefore?: number;
  tokensAfter?: number;
  [key: string]: unknown;
}

type JobFields = Omit<z.infer<typeof JobSchema>, 'result' | 'status'>;

/** A job; `status` narrows `result` (`if (job.status === 'completed') job.result.tokensAfter`). */
export type Job = JobFields &
  (
    | { status: 'completed'; result: CompactionResult }
    | { status: 'noop'; result: NoopResult }
    | { status: Exclude<JobStatus, 'completed' | 'noop'>; result: Record<string, unknown> | null }
  );

export const TERMINAL_JOB_STATUSES: readonly JobStatus[] = ['completed', 'noop', 'failed', 'cancelled'];

export function isTerminal(status: JobStatus): boolean {
  return TERMINAL_JOB_STATUSES.includes(status);
}

/** A message in the default (`anthropic`) input format; `content` may be a plain string. */
export interface InputMessage {
  role: Role;
  content: string | Block[];
  name?: string;
  usage?: { inputTokens?: number; outputTokens?: number };
  metadata?: Record<string, unknown>;
  /** true: never archived, kept verbatim in the context (`unpinMessage` releases it) */
  pinned?: boolean;
}

/** A Chat Completions message (`tool_calls`, `role: "tool"` + `tool_call_id`). */
export type OpenAIInputMessage = { role: string } & Record<string, unknown>;

/** `autoCompact: false`: the append starts no auto compaction (imports of past history). */
export type AppendRequest =
  | { format?: 'anthropic'; messages: readonly InputMessage[]; usage?: { inputTokens: number }; autoCompact?: boolean }
  | { format: 'openai'; messages: readonly OpenAIInputMessage[]; usage?: { inputTokens: number }; autoCompact?: boolean };

export type CompactionRequest = CompactionOptions & {
  /** `tool` when the agent called its `compact` tool */
  trigger?: 'api' | 'tool';
};

type ContextBody = z.infer<typeof ContextResponseSchema>;
export type ContextFormat = 'anthropic' | 'openai';
/** Anthropic: `{system?, messages}` ready for `messages.create`. */
export type AnthropicContext = ContextBody;
/** OpenAI: `{messages}` ready for `chat.completions.create` (system prompts stay messages). */
export type OpenAIContext = Pick<ContextBody, 'messages'>;

type ToolDefinition = z.infer<typeof ToolDefinitionSchema>;
export type AnthropicTool = Extract<ToolDefinition, { input_schema: unknown }>;
export type OpenAITool = Extract<ToolDefinition, { type: 'function' }>;
export type ToolName = 'compact' | 'recall';

export interface Health {
  status: string;
  checks?: Record<string, string>;
}
