import { z } from 'zod';

/** Shapes shared by several routes (SPEC §6.1). */

export const ConversationIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,128}$/, 'must be 1-128 characters of A-Z a-z 0-9 . _ -');

export const ConversationParamsSchema = z.object({ id: ConversationIdSchema });
export const UuidParamsSchema = z.object({ id: z.uuid('must be a UUID') });

export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    code: z.string(),
    detail: z.string().optional(),
    instance: z.string().optional(),
    errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details' });

export const JobRefSchema = z.object({ id: z.uuid(), status: z.string() });

/** Content blocks as stored and returned (Anthropic-style). */
export const BlockSchema = z
  .record(z.string(), z.unknown())
  .meta({ description: 'A content block: text, tool_use, tool_result or image (Anthropic shapes)' });

export const errorResponses = {
  400: ProblemSchema,
  401: ProblemSchema,
  404: ProblemSchema,
} as const;

/** `Idempotency-Key` header accepted by every POST. */
export const IdempotencyHeadersSchema = z.object({
  'idempotency-key': z.string().min(1).max(255).optional(),
});
