import { z } from 'zod';

import { jsonProblem, MESSAGE_BOUNDS } from '../../lib/text-safety.js';
import { BlockSchema, ConversationIdSchema, JobRefSchema } from './common.js';

export const MAX_MESSAGES_PER_APPEND = 1000;

export const AppendBodySchema = z.strictObject({
  format: z.enum(['anthropic', 'openai']).default('anthropic'),
  messages: z
    .array(
      z
        .unknown()
        .superRefine((message, ctx) => {
          const problem = jsonProblem(message, MESSAGE_BOUNDS);
          if (problem) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
        })
        .meta({ description: `a message in the chosen format (at most ${MESSAGE_BOUNDS.maxDepth} levels deep)` }),
    )
    .min(1, 'must hold at least one message')
    .max(MAX_MESSAGES_PER_APPEND, `at most ${MAX_MESSAGES_PER_APPEND} messages per append`),
  usage: z
    .strictObject({ inputTokens: z.number().int().nonnegative().max(1e9) })
    .optional()
    .meta({ description: 'provider-reported input tokens of the last model call; wins over the own count' }),
  autoCompact: z
    .boolean()
    .default(true)
    .meta({ description: 'false: this append starts no auto compaction (an import of past history); the warning flag is still kept' }),
});
export type AppendBody = z.infer<typeof AppendBodySchema>;

export const AppendResponseSchema = z
  .object({
    messages: z.array(z.object({ id: z.uuid(), seq: z.number().int(), tokens: z.number().int() })),
    activeTokens: z.number().int(),
    compaction: JobRefSchema.nullable(),
    compactionDeferred: z
      .object({
        code: z.enum(['TENANT_ACTIVE_COMPACTIONS_LIMIT', 'TENANT_COMPACTION_RATE_LIMIT']),
        detail: z.string(),
        retryAfter: z.number().int().meta({ description: 'seconds after which a compaction would be accepted again' }),
      })
      .optional()
      .meta({
        description:
          'present when this append crossed the auto-compaction threshold but the tenant is over a quota: no job was started (the append is stored all the same); the next append past the threshold tries again',
      }),
  })
  .meta({ id: 'AppendResult' });
export type AppendResponse = z.infer<typeof AppendResponseSchema>;
/** Why an append's auto compaction was not started (a tenant quota). */
export type CompactionDeferred = NonNullable<AppendResponse['compactionDeferred']>;

export const StoredMessageSchema = z
  .object({
    id: z.uuid(),
    seq: z.number().int(),
    role: z.enum(['system', 'user', 'assistant', 'tool']),
    kind: z.enum(['message', 'clip_archive']),
    content: z.array(BlockSchema),
    name: z.string().optional(),
    tokens: z.number().int(),
    meta: z.literal(true).optional().meta({
      description: 'a meta turn (harness notification, slash-command wrapper, reminder): kept verbatim, never taken for the user’s request',
    }),
    pinned: z.boolean().meta({
      description:
        'pinned (at append or through …/messages/:seq/pin): never archived, kept verbatim in the context. The newest user request is kept as well without being pinned',
    }),
    createdAt: z.string(),
  })
  .meta({ id: 'Message' });

export const MessageSeqParamsSchema = z.object({
  id: ConversationIdSchema,
  seq: z.coerce
    .number({ error: 'must be an integer seq' })
    .int('must be an integer seq')
    .min(1, 'must be a seq (1 or more)')
    .max(Number.MAX_SAFE_INTEGER, 'must be a seq (at most 2^53 - 1)')
    .meta({ description: 'the message’s seq in the conversation' }),
});

export const ListMessagesQuerySchema = z.object({
  after: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(200),
});

export const ListMessagesResponseSchema = z.object({
  messages: z.array(StoredMessageSchema),
  nextAfter: z.number().int().nullable(),
});

export const ContextQuerySchema = z.object({
  format: z.enum(['anthropic', 'openai', 'responses']).default('anthropic').meta({
    description:
      'anthropic: Messages `{system, messages}`; openai: Chat Completions `{messages}`; responses: the Responses API’s `{input}`',
  }),
  model: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: "the agent's model: a provider's own compaction item opens the context only for the model that made it" }),
});

export const ContextResponseSchema = z
  .object({
    system: z.string().optional(),
    messages: z.array(z.record(z.string(), z.unknown())),
    anthropicBeta: z
      .string()
      .optional()
      .meta({ description: 'the anthropic-beta header to send with this context (it opens with a provider compaction block)' }),
  })
  .meta({ id: 'Context', description: 'ready-to-send request body fragment' });

export const ResponsesContextSchema = z.object({ input: z.array(z.record(z.string(), z.unknown())) }).meta({
  id: 'ResponsesContext',
  description: 'ready-to-send `input` of an OpenAI Responses request (system messages as developer messages in place)',
});

/** What `GET /v1/conversations/:id/context` answers, by `format`. */
export const ContextBodySchema = z.union([ContextResponseSchema, ResponsesContextSchema]);
