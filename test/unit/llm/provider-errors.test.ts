import { describe, expect, it } from 'vitest';

import { llmErrorFromHttp, parseRetryAfterMs } from '../../../src/llm/provider-errors.js';

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it.each([
    [{ 'retry-after-ms': '1500.2' }, 1501],
    [{ 'retry-after-ms': '250', 'retry-after': '9' }, 250],
    [{ 'retry-after': '3' }, 3_000],
    [{ 'retry-after': '0.5' }, 500],
    [{ 'retry-after': 'Thu, 01 Jan 2026 00:00:07 GMT' }, 7_000],
    [{ 'retry-after': 'soon' }, undefined],
    [{ 'retry-after-ms': '-4' }, undefined],
    [{}, undefined],
  ])('%j → %s', (headers, expected) => {
    expect(parseRetryAfterMs(new Headers(headers), now)).toBe(expected);
  });
});

describe('llmErrorFromHttp', () => {
  const fail = (status: number, extra: { type?: string; code?: string; message?: string; headers?: Record<string, string> } = {}) =>
    llmErrorFromHttp({
      provider: 'openai',
      status,
      headers: new Headers(extra.headers ?? {}),
      type: extra.type,
      code: extra.code,
      message: extra.message ?? 'm',
      cause: undefined,
    });

  it.each([
    [429, {}, 'rate_limit', true],
    [429, { type: 'insufficient_quota', code: 'insufficient_quota' }, 'quota', false],
    [529, { type: 'overloaded_error' }, 'overloaded', true],
    [503, {}, 'overloaded', true],
    [500, {}, 'server', true],
    [502, {}, 'server', true],
    [409, {}, 'server', true],
    [408, {}, 'timeout', true],
    [400, {}, 'bad_request', false],
    [400, { message: 'Your credit balance is too low to access the API' }, 'quota', false],
    [401, {}, 'auth', false],
    [403, {}, 'auth', false],
    [402, {}, 'quota', false],
    [404, {}, 'bad_request', false],
    [413, {}, 'bad_request', false],
    [422, {}, 'bad_request', false],
  ] as const)('%i %j → %s (retryable %s)', (status, extra, kind, retryable) => {
    const error = fail(status, extra);
    expect(error.kind).toBe(kind);
    expect(error.retryable).toBe(retryable);
    expect(error.providerStatus).toBe(status);
  });

  it('keeps retry-after on retryable errors and names context-length 400s', () => {
    expect(fail(429, { headers: { 'retry-after': '2' } }).retryAfterMs).toBe(2_000);
    expect(fail(400, { code: 'context_length_exceeded' }).code).toBe('LLM_CONTEXT_TOO_LONG');
    expect(fail(400, { message: 'prompt is too long: 250000 tokens > 200000 maximum' }).code).toBe('LLM_CONTEXT_TOO_LONG');
  });
});
