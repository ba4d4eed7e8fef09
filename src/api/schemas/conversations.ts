import { z } from 'zod';
import { ConversationIdSchema, JobRefSchema } from './common.js';

export const CreateConversationBodySchema = z.strictObject({
  id: ConversationIdSchema.optional(),
  model: z.string().min(1).max(200).optional(),
  contextLimit: z.number().int().min(1024).max(100_000_000).optional(),
  policy: z.record(z.string(), z.unknown()).optional().meta({ description: 'compaction policy overrides (see README)' }),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type CreateConversationBody = z.infer<typeof CreateConversationBodySchema>;

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
