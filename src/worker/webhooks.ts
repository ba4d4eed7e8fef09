import { createHmac, timingSafeEqual } from 'node:crypto';

import type { WebhookEvent } from '../db/schema.js';

/**
 * Webhook signing and the data of job events. A receiver recomputes
 * `HMAC-SHA256(secret, "<timestamp>.<raw body>")`, compares it in constant time with the
 * `v1=` value of `compactd-signature`, and rejects timestamps too far from its clock
 * (replays). Every attempt is signed afresh with its own timestamp; the body is the same.
 */

export const WEBHOOK_HEADERS = {
  signature: 'compactd-signature',
  timestamp: 'compactd-timestamp',
  event: 'compactd-event',
  delivery: 'compactd-delivery',
} as const;

/** Default tolerance between the signed timestamp and the receiver's clock. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** `v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`; the version prefix leaves room for new schemes. */
export function signWebhook(secret: string, timestampSeconds: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex')}`;
}

/** The headers of one attempt. */
export function webhookHeaders(
  delivery: { id: string; event: WebhookEvent },
  secret: string,
  body: string,
  nowMs: number,
): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'compactd-webhooks/1',
    [WEBHOOK_HEADERS.event]: delivery.event,
    [WEBHOOK_HEADERS.delivery]: delivery.id,
    [WEBHOOK_HEADERS.timestamp]: String(timestamp),
    [WEBHOOK_HEADERS.signature]: signWebhook(secret, timestamp, body),
  };
}

/**
 * Receiver-side check (documented in the README; used by the tests' receiver): the
 * signature matches the raw body and the timestamp is within the tolerance.
 */
export function verifyWebhookSignature(params: {
  secret: string;
  body: string;
  timestamp: string | undefined;
  signature: string | undefined;
  nowMs?: number;
  toleranceSeconds?: number;
}): boolean {
  const { timestamp, signature } = params;
  if (timestamp === undefined || signature === undefined || !/^\d+$/.test(timestamp)) return false;
  const skew = Math.abs((params.nowMs ?? Date.now()) / 1000 - Number(timestamp));
  if (skew > (params.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS)) return false;
  const expected = Buffer.from(signWebhook(params.secret, Number(timestamp), params.body));
  // A header may carry several signatures (secret rotation): any one that matches is enough.
  return signature.split(',').some((candidate) => {
    const given = Buffer.from(candidate.trim());
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
