import { z } from 'zod';

import { type JsonBounds, jsonProblem, METADATA_BOUNDS, safeText } from '../../lib/text-safety.js';

export { safeText };

/** Shapes shared by several routes (SPEC §6.1), and the one input rule for strings. */

/**
 * Free-form JSON objects (conversation metadata): bounded depth and size, every key and
 * string clean. Documented as an object of anything; the bounds are in the description.
 */
export function freeFormObject(bounds: JsonBounds = METADATA_BOUNDS) {
  return z
    .record(z.string(), z.unknown())
    .superRefine((value, ctx) => {
      const problem = jsonProblem(value, bounds);
      if (problem) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
    })
    .meta({
      description: `free-form JSON object: at most ${bounds.maxDepth} levels deep and ${bounds.maxChars} characters as JSON; no NUL or unpaired surrogates`,
    });
}

/**
 * Client-chosen conversation ids (SPEC §6.1): `[A-Za-z0-9._-]{1,128}`, except `.` and `..`,
 * which URL resolution (browsers, fetch, proxies) turns into another path.
 */
export const ConversationIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,128}$/, 'must be 1-128 characters of A-Z a-z 0-9 . _ -')
  .refine((id) => id !== '.' && id !== '..', 'must not be "." or ".." (they are path segments, not names)')
  .meta({ description: '1-128 characters of A-Z a-z 0-9 . _ -, not "." or ".."', example: 'agent-run-42' });

/** 0001-01-01T00:00:00Z: zod's ISO format admits year 0000, which Postgres rejects ("date/time field value out of range"). */
const EARLIEST_TIMESTAMP_MS = Date.parse('0001-01-01T00:00:00Z');

/**
 * An instant a `timestamptz` column can be compared with: ISO 8601 in UTC (`Z`), years
 * 0001–9999 (the format allows four digits only, so nothing past Postgres' upper bound).
 */
export function timestampSchema() {
  return z.iso
    .datetime({ error: 'must be an ISO 8601 date-time in UTC, e.g. 2025-01-31T12:00:00Z' })
    .refine((value) => Date.parse(value) >= EARLIEST_TIMESTAMP_MS, 'must be on or after 0001-01-01T00:00:00Z')
    .meta({ description: 'ISO 8601 date-time in UTC (Z), from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z' });
}

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
  'idempotency-key': safeText({ min: 1, max: 255 }).optional(),
});
