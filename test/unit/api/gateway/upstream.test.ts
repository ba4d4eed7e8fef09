import { describe, expect, it } from 'vitest';

import {
  isContextOverflow,
  overflowSizes,
  overflowTarget,
  providerError,
  redirectedUpstream,
  relayedHeaders,
  upstreamHeaders,
  upstreamUrl,
  usesOperatorKey,
} from '../../../../src/api/gateway/upstream.js';

const config = { anthropic: { apiKey: 'sk-ant', baseUrl: 'http://sim:1/' }, openai: { apiKey: undefined, baseUrl: 'http://sim:1/v1' } };

describe('upstream', () => {
  it('maps gateway paths onto each provider base URL convention', () => {
    expect(upstreamUrl('anthropic', config, '/v1/messages?beta=true')).toBe('http://sim:1/v1/messages?beta=true');
    expect(upstreamUrl('openai', config, '/v1/chat/completions')).toBe('http://sim:1/v1/chat/completions');
    expect(upstreamUrl('anthropic', { ...config, anthropic: { apiKey: 'k', baseUrl: undefined } }, '/v1/messages')).toBe(
      'https://api.anthropic.com/v1/messages',
    );
  });

  it('replaces the compactd key with the provider key and drops compactd headers', () => {
    const headers = upstreamHeaders('anthropic', config, {
      'x-api-key': 'cmp_key',
      'anthropic-beta': 'b1',
      'x-compactd-conversation': 'c',
      host: 'h',
      'content-length': '9',
    });
    expect(headers).toEqual({
      'anthropic-beta': 'b1',
      'x-api-key': 'sk-ant',
      'content-type': 'application/json',
      'accept-encoding': 'identity',
    });
  });

  it('passes the client provider key through, and has nothing to send without any', () => {
    expect(
      upstreamHeaders('openai', config, { authorization: 'Bearer cmp_key', 'x-compactd-upstream-key': 'sk-own' })?.['authorization'],
    ).toBe('Bearer sk-own');
    expect(upstreamHeaders('openai', config, { authorization: 'Bearer cmp_key' })).toBeNull();
  });

  it('forwards only the provider-facing headers a client sends', () => {
    const incoming = {
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'prompt-caching-2024-07-31',
      'x-stainless-retry-count': '0',
      'x-stainless-os': 'Linux',
      'openai-beta': 'assistants=v2',
      accept: 'application/json',
      'user-agent': 'claude-cli/2.0.0',
      'x-app': 'cli',
      'x-claude-code-session-id': 'd7e3',
      // everything below stays here
      cookie: 'session=1',
      forwarded: 'for=10.0.0.1',
      'x-forwarded-for': '10.0.0.1',
      'x-forwarded-host': 'internal',
      'x-forwarded-access-token': 'oauth-token',
      'x-real-ip': '10.0.0.1',
      'cf-access-jwt-assertion': 'jwt',
      'cf-connecting-ip': '10.0.0.1',
      'proxy-authorization': 'Basic x',
      'x-compactd-conversation': 'c',
      'x-api-key': 'cmp_key',
      authorization: 'Bearer cmp_key',
      'content-encoding': 'gzip',
      'content-length': '9',
      te: 'trailers',
      'keep-alive': 'timeout=5',
      upgrade: 'h2c',
      'x-internal-tenant': 't1',
      'idempotency-key': 'k',
    };
    expect(upstreamHeaders('anthropic', config, incoming)).toEqual({
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'prompt-caching-2024-07-31',
      'x-stainless-retry-count': '0',
      'x-stainless-os': 'Linux',
      'openai-beta': 'assistants=v2',
      accept: 'application/json',
      'user-agent': 'claude-cli/2.0.0',
      'x-app': 'cli',
      'x-claude-code-session-id': 'd7e3',
      'x-api-key': 'sk-ant',
      'content-type': 'application/json',
      'accept-encoding': 'identity',
    });
  });

  it('drops a header the client names in Connection, even one it would forward', () => {
    const headers = upstreamHeaders('anthropic', config, {
      connection: 'keep-alive, X-Stainless-Hop',
      'x-stainless-hop': '1',
      'x-stainless-lang': 'js',
      'anthropic-beta': 'b',
    });
    expect(headers).toMatchObject({ 'x-stainless-lang': 'js', 'anthropic-beta': 'b' });
    expect(headers).not.toHaveProperty('x-stainless-hop');
    expect(headers).not.toHaveProperty('connection');
    expect(upstreamHeaders('anthropic', config, { connection: ['close', 'anthropic-beta'], 'anthropic-beta': 'b' })).not.toHaveProperty(
      'anthropic-beta',
    );
  });

  it("sends OpenAI's organization and project only with the client's own key", () => {
    const selectors = { 'openai-organization': 'org-1', 'openai-project': 'proj-1', 'openai-beta': 'x' };
    const operator = upstreamHeaders('openai', { ...config, openai: { apiKey: 'sk-op', baseUrl: undefined } }, selectors);
    expect(operator).toMatchObject({ 'openai-beta': 'x', authorization: 'Bearer sk-op' });
    expect(operator).not.toHaveProperty('openai-organization');
    expect(operator).not.toHaveProperty('openai-project');
    const own = upstreamHeaders('openai', config, { ...selectors, 'x-compactd-upstream-key': 'sk-own' });
    expect(own).toMatchObject({ 'openai-organization': 'org-1', 'openai-project': 'proj-1', authorization: 'Bearer sk-own' });
    expect(own).not.toHaveProperty('x-compactd-upstream-key');
    expect(usesOperatorKey({})).toBe(true);
    expect(usesOperatorKey({ 'x-compactd-upstream-key': 'sk-own' })).toBe(false);
  });

  it("relays the provider's own response headers, not its cookies, account ids or (with compactd's key) rate limits", () => {
    const upstream = new Headers({
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'request-id': 'req_1',
      'x-request-id': 'req_2',
      'anthropic-organization-id': 'org-uuid',
      'anthropic-ratelimit-requests-remaining': '49',
      'anthropic-priority-input-tokens-limit': '1000',
      'anthropic-beta-info': 'x',
      'openai-organization': 'org-op',
      'openai-project': 'proj-op',
      'openai-processing-ms': '120',
      'openai-version': '2020-10-01',
      'x-ratelimit-remaining-tokens': '1000',
      'retry-after': '2',
      'retry-after-ms': '1500',
      'x-should-retry': 'true',
      'set-cookie': '__cf_bm=abc; path=/',
      'cf-ray': '8a-SJC',
      server: 'cloudflare',
      via: '1.1 proxy',
      'content-length': '10',
      'content-encoding': 'gzip',
      'transfer-encoding': 'chunked',
      'x-envoy-upstream-service-time': '5',
    });
    const common = {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'request-id': 'req_1',
      'x-request-id': 'req_2',
      'anthropic-beta-info': 'x',
      'openai-processing-ms': '120',
      'openai-version': '2020-10-01',
      'retry-after': '2',
      'retry-after-ms': '1500',
      'x-should-retry': 'true',
    };
    expect(relayedHeaders(upstream, true)).toEqual(common);
    expect(relayedHeaders(upstream, false)).toEqual({
      ...common,
      'anthropic-ratelimit-requests-remaining': '49',
      'anthropic-priority-input-tokens-limit': '1000',
      'x-ratelimit-remaining-tokens': '1000',
    });
  });

  it('answers a redirect 502 in the provider shape, and nothing else', () => {
    expect(redirectedUpstream('anthropic', 307)).toEqual({
      status: 502,
      body: {
        type: 'error',
        error: { type: 'api_error', message: 'the provider answered with a redirect (HTTP 307), which the gateway does not follow' },
      },
    });
    expect(redirectedUpstream('openai', 301)?.body).toMatchObject({ error: { type: 'server_error' } });
    for (const status of [200, 299, 400, 429, 500]) expect(redirectedUpstream('anthropic', status)).toBeNull();
  });

  it('shapes a refusal of access as each provider does', () => {
    expect(providerError('anthropic', 403, 'no', 'body.model').body).toEqual({
      type: 'error',
      error: { type: 'permission_error', message: 'no', field: 'body.model' },
    });
    expect(providerError('openai', 403, 'no', 'body.tools[0]').body).toEqual({
      error: { message: 'no', type: 'invalid_request_error', param: 'body.tools[0]', code: null },
    });
  });

  it('recognises context overflows and the sizes they name', () => {
    const anthropic =
      '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}';
    expect(isContextOverflow('anthropic', 400, anthropic)).toBe(true);
    expect(isContextOverflow('anthropic', 400, '{"error":{"message":"messages: roles must alternate"}}')).toBe(false);
    expect(isContextOverflow('openai', 400, '{"error":{"code":"context_length_exceeded"}}')).toBe(true);
    expect(overflowSizes(anthropic)).toEqual({ prompt: 208310, window: 200000 });
    expect(
      overflowSizes("This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens."),
    ).toEqual({ prompt: 130512, window: 128000 });
    expect(overflowTarget(150_000, { prompt: 208_310, window: 200_000 })).toBe(150_000 - 8_310 - 40_000);
  });
});
