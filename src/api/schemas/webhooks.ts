import { z } from 'zod';

import { WEBHOOK_EVENTS } from '../../db/schema.js';
import { ConversationIdSchema, safeText } from './common.js';

/** Webhook configuration and the delivery log (README "Webhooks"). */

export const WebhookEventSchema = z.enum(WEBHOOK_EVENTS);

const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
  .max(2048)
  .meta({
    description: 'where events are POSTed; must reach a public address unless the operator allows it (COMPACTD_WEBHOOK_ALLOW)',
    example: 'https://platform.example/hooks/compactd',
  });

export const WebhookBodySchema = z.strictObject({
  url: httpUrl,
  secret: safeText({ min: 16, max: 256 }).optional().meta({
    description:
      'HMAC-SHA256 key of the signatures; generated (and returned once) when a new webhook omits it, kept when an existing one is updated without it',
  }),
  events: z
    .array(WebhookEventSchema)
    .max(WEBHOOK_EVENTS.length)
    .refine((events) => new Set(events).size === events.length, 'must not repeat an event')
    .optional()
    .meta({ description: 'event types to receive; all of them when omitted or empty' }),
  enabled: z
    .boolean()
    .default(true)
    .meta({ description: 'false pauses deliveries (a conversation webhook that is disabled also silences the tenant webhook for it)' }),
});
export type WebhookBody = z.infer<typeof WebhookBodySchema>;

export const WebhookSchema = z
  .object({
    scope: z.enum(['tenant', 'conversation']),
    conversationId: z.string().nullable(),
    url: z.string(),
    events: z.array(WebhookEventSchema).meta({ description: 'empty: every event' }),
    enabled: z.boolean(),
    secretHint: z.string().meta({
      description: 'at most 4 characters of the secret (after the `whsec_` prefix of a generated one) and `…`, to tell secrets apart',
    }),
    secret: z.string().optional().meta({ description: 'only in the response that generated it: store it now' }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Webhook' });
export type WebhookView = z.infer<typeof WebhookSchema>;

const WebhookAttemptSchema = z.object({
  at: z.string(),
  statusCode: z
    .number()
    .int()
    .nullable()
    .meta({ description: 'the receiver’s HTTP status; null when no answer came (network error, timeout)' }),
  error: z.string().nullable().meta({
    description:
      '`HTTP <status>`, `connection_failed` (no answer) or `target_not_allowed` (the host is, or resolves to, a non-public address); never the network error itself; null when delivered',
  }),
  durationMs: z.number().int(),
});

export const WebhookDeliverySchema = z
  .object({
    id: z.uuid().meta({ description: 'also the `id` of the event body and the `compactd-delivery` header' }),
    event: WebhookEventSchema,
    conversationId: z.string().nullable(),
    url: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number().int(),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    attemptLog: z.array(WebhookAttemptSchema),
    payload: z.record(z.string(), z.unknown()).meta({ description: 'the JSON body sent' }),
    createdAt: z.string(),
    deliveredAt: z.string().nullable(),
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDeliveryView = z.infer<typeof WebhookDeliverySchema>;

export const ListDeliveriesQuerySchema = z.object({
  conversationId: ConversationIdSchema.optional().meta({ description: 'only this conversation’s deliveries' }),
  status: z.enum(['pending', 'delivered', 'failed']).optional(),
  event: WebhookEventSchema.optional(),
  before: z.uuid().optional().meta({ description: 'id of the last delivery of the previous page (`nextBefore`)' }),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const ListDeliveriesResponseSchema = z.object({
  deliveries: z.array(WebhookDeliverySchema).meta({ description: 'newest first' }),
  nextBefore: z.uuid().nullable(),
});
