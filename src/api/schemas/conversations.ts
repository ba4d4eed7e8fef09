import { z } from 'zod';
import { PolicyOverrideSchema } from '../../config/policy.js';
import { ConversationIdSchema, freeFormObject, JobRefSchema, safeText } from './common.js';

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
});
export type CreateConversationBody = z.infer<typeof CreateConversationBodySchema>;

export const UpdateConversationBodySchema = z
  .strictObject({
    model: SessionModelSchema.nullable().optional().meta({ description: 'null clears it; a new model without `contextLimit` takes that model’s context limit' }),
    contextLimit: ContextLimitSchema.optional(),
    policy: PolicyBodySchema.optional().meta({ description: 'replaces the conversation’s policy overrides ({} clears them); validated as a whole like at create' }),
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
