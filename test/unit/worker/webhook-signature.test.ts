import { describe, expect, it } from 'vitest';

import { jobEventType } from '../../../src/db/repos/job-outbox.js';
import { signWebhook, verifyWebhookSignature, WEBHOOK_HEADERS, webhookHeaders } from '../../../src/worker/webhooks.js';

const SECRET = 'whsec_test_secret_0123456789';
const BODY = '{"id":"d1","type":"compaction.completed"}';
const TIMESTAMP = 1_700_000_000;
// printf '%s' '1700000000.<BODY>' | openssl dgst -sha256 -hmac "$SECRET"
const OPENSSL_HEX = '8ff5532402ad661aebed30139be58926333ec55a7d36c16f0b94207c4316a78a';

const at = (seconds: number) => seconds * 1000;

describe('webhook signatures', () => {
  it('is v1= + HMAC-SHA256 over "<timestamp>.<body>", as openssl computes it', () => {
    expect(signWebhook(SECRET, TIMESTAMP, BODY)).toBe(`v1=${OPENSSL_HEX}`);
  });

  it('signs each attempt with its own timestamp and names the event and delivery', () => {
    const headers = webhookHeaders({ id: 'd1', event: 'compaction.completed' }, SECRET, BODY, at(TIMESTAMP) + 999);
    expect(headers).toMatchObject({
      'content-type': 'application/json',
      [WEBHOOK_HEADERS.timestamp]: String(TIMESTAMP),
      [WEBHOOK_HEADERS.signature]: `v1=${OPENSSL_HEX}`,
      [WEBHOOK_HEADERS.event]: 'compaction.completed',
      [WEBHOOK_HEADERS.delivery]: 'd1',
    });
    const later = webhookHeaders({ id: 'd1', event: 'compaction.completed' }, SECRET, BODY, at(TIMESTAMP + 60));
    expect(later[WEBHOOK_HEADERS.signature]).not.toBe(headers[WEBHOOK_HEADERS.signature]);
  });

  const valid = { secret: SECRET, body: BODY, timestamp: String(TIMESTAMP), signature: `v1=${OPENSSL_HEX}`, nowMs: at(TIMESTAMP + 10) };

  it('verifies a genuine signature', () => {
    expect(verifyWebhookSignature(valid)).toBe(true);
  });

  it.each([
    ['a changed body', { body: BODY.replace('d1', 'd2') }],
    ['another secret', { secret: 'whsec_other_secret_0123456789' }],
    ['a changed timestamp', { timestamp: String(TIMESTAMP + 1) }],
    ['a timestamp outside the tolerance', { nowMs: at(TIMESTAMP + 301) }],
    ['a timestamp from the future', { nowMs: at(TIMESTAMP - 301) }],
    ['no signature', { signature: undefined }],
    ['no timestamp', { timestamp: undefined }],
    ['a non-numeric timestamp', { timestamp: '17e8' }],
    ['a truncated signature', { signature: `v1=${OPENSSL_HEX.slice(0, 40)}` }],
    ['another scheme', { signature: `v0=${OPENSSL_HEX}` }],
  ])('rejects %s', (_, change) => {
    expect(verifyWebhookSignature({ ...valid, ...change })).toBe(false);
  });

  it('accepts a header carrying several signatures when one matches (secret rotation)', () => {
    expect(verifyWebhookSignature({ ...valid, signature: `v1=${'0'.repeat(64)}, v1=${OPENSSL_HEX}` })).toBe(true);
  });

  it('honours a custom tolerance', () => {
    expect(verifyWebhookSignature({ ...valid, nowMs: at(TIMESTAMP + 30), toleranceSeconds: 10 })).toBe(false);
    expect(verifyWebhookSignature({ ...valid, nowMs: at(TIMESTAMP + 30), toleranceSeconds: 60 })).toBe(true);
  });
});

describe('job events', () => {
  it.each([
    ['completed', 'compaction.completed'],
    ['failed', 'compaction.failed'],
    ['noop', 'compaction.noop'],
    ['cancelled', 'compaction.cancelled'],
    ['queued', null],
  ])('status %s emits %s', (status, event) => {
    expect(jobEventType(status)).toBe(event);
  });
});
