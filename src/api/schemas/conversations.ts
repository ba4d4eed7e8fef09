import { z } from 'zod';

import { PolicyOverrideSchema } from '../../config/policy.js';
import { textProblem } from '../../lib/text-safety.js';
import { ConversationIdSchema, freeFormObject, JobRefSchema, safeText, timestampSchema } from './common.js';

const SessionModelSchema = safeText({ min: 1, max: 200 }).meta({
  description: 'the session model, for its context limit (unknown models get the 128k default)',
  example: 'claude-sonnet-4-5',
});
const ContextLimitSchema = z.number().int().min(1024).max(100_000_000);
const PolicyBodySchema = PolicyOverrideSchema.meta({
  description:
    'compaction policy overrides (see README); validated as a whole over the tenant policy and the defaults, cross-field rules included ' +
    '(targetRatio < triggerRatio, warnRatio ≤ triggerRatio, tier1 headTokens + tailTokens < maxTokens, summaryMaxTokens < chunkTokens); ' +
    '`model` must be served by a configured provider',
});

export const CreateConversationBodySchema = z.strictObject({
  id: ConversationIdSchema.optional(),
  model: SessionModelSchema.optional(),
  contextLimit: ContextLimitSchema.optional(),
  policy: PolicyBodySchema.optional(),
  metadata: freeFormObject().optional(),
  parentId: ConversationIdSchema.optional().meta({
    description: 'id of the conversation this one was started from (a sub-agent’s parent), of the same tenant; listed as `parentId`',
  }),
});
export type CreateConversationBody = z.infer<typeof CreateConversationBodySchema>;

export const UpdateConversationBodySchema = z
  .strictObject({
    model: SessionModelSchema.nullable()
      .optional()
      .meta({ description: 'null clears it; a new model without `contextLimit` takes that model’s context limit' }),
    contextLimit: ContextLimitSchema.optional(),
    policy: PolicyBodySchema.optional().meta({
      description: 'replaces the conversation’s policy overrides ({} clears them); validated as a whole like at create',
    }),
    metadata: freeFormObject().optional().meta({ description: 'replaces the metadata' }),
  })
  .refine((body) => Object.keys(body).length > 0, 'must change at least one of model, contextLimit, policy, metadata');
export type UpdateConversationBody = z.infer<typeof UpdateConversationBodySchema>;

export const ConversationSchema = z
  .object({
    id: z.string(),
    model: z.string().nullable(),
    contextLimit: z.number().int(),
    messageCount: z.number().int(),
    activeTokens: z.number().int(),
    contextUsage: z.object({ ratio: z.number(), warning: z.boolean() }),
    compactionCount: z.number().int(),
    lastJob: JobRefSchema.nullable(),
    policy: z.record(z.string(), z.unknown()),
    metadata: z.record(z.string(), z.unknown()),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Conversation' });
export type Conversation = z.infer<typeof ConversationSchema>;

/** A page boundary of GET /v1/conversations, opaque to clients: the last row's creation (to the microsecond) and id. */
export interface ListCursor {
  createdAt: string;
  externalId: string;
}

const CURSOR_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export function encodeListCursor(cursor: ListCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.externalId])).toString('base64url');
}

/** The cursor `encodeListCursor` made, or null for anything else (it reaches SQL as values, so each is checked). */
export function decodeListCursor(text: string): ListCursor | null {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== 2) return null;
  const [createdAt, externalId] = value as unknown[];
  if (typeof createdAt !== 'string' || !CURSOR_INSTANT.test(createdAt) || Number.isNaN(Date.parse(createdAt))) return null;
  if (typeof externalId !== 'string' || externalId.length === 0 || externalId.length > 1024 || textProblem(externalId)) return null;
  return { createdAt, externalId };
}

export const ListConversationsQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z
    .string()
    .max(4096)
    .refine((text) => decodeListCursor(text) !== null, 'must be the `nextCursor` of a previous page')
    .optional()
    .meta({ description: '`nextCursor` of the previous page (the same filters must be given again)' }),
  createdBy: safeText({ min: 1, max: 200 }).optional().meta({
    description: 'only conversations whose `metadata.createdBy` is this string; the gateway creates its conversations with `gateway`',
    example: 'gateway',
  }),
  parentId: ConversationIdSchema.optional().meta({
    description: 'only the conversations started from this one (none when it does not exist)',
  }),
  updatedSince: timestampSchema().optional().meta({ description: 'only conversations updated at or after this instant (ISO 8601, UTC)' }),
});

export const ConversationSummarySchema = z
  .object({
    id: z.string(),
    model: z.string().nullable(),
    contextLimit: z.number().int(),
    activeTokens: z.number().int(),
    activeMessages: z.number().int().meta({ description: 'messages in the active history (archived ones excluded)' }),
    createdAt: z.string(),
    updatedAt: z.string(),
    createdBy: z
      .string()
      .nullable()
      .meta({ description: '`metadata.createdBy` when it is a string (`gateway` for the gateway’s conversations)' }),
    parentId: z.string().nullable().meta({ description: 'the conversation this one was started from; null when none (or it was deleted)' }),
  })
  .meta({ id: 'ConversationSummary' });

export const ListConversationsResponseSchema = z.object({
  conversations: z.array(ConversationSummarySchema).meta({ description: 'oldest first: by creation, then id' }),
  nextCursor: z.string().nullable().meta({ description: 'pass as `cursor` for the next page; null on the last page' }),
});
