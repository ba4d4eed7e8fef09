import { describe, expect, it } from 'vitest';
import { isContextOverflow, overflowSizes, overflowTarget, upstreamHeaders, upstreamUrl } from '../../../../src/api/gateway/upstream.js';

const config = { anthropic: { apiKey: 'sk-ant', baseUrl: 'http://sim:1/' }, openai: { apiKey: undefined, baseUrl: 'http://sim:1/v1' } };

describe('upstream', () => {
  it('maps gateway paths onto each provider base URL convention', () => {
    expect(upstreamUrl('anthropic', config, '/v1/messages?beta=true')).toBe('http://sim:1/v1/messages?beta=true');
    expect(upstreamUrl('openai', config, '/v1/chat/completions')).toBe('http://sim:1/v1/chat/completions');
    expect(upstreamUrl('anthropic', { ...config, anthropic: { apiKey: 'k', baseUrl: undefined } }, '/v1/messages')).toBe('https://api.anthropic.com/v1/messages');
  });

  it('replaces the compactd key with the provider key and drops compactd headers', () => {
    const headers = upstreamHeaders('anthropic', config, { 'x-api-key': 'cmp_key', 'anthropic-beta': 'b1', 'x-compactd-conversation': 'c', host: 'h', 'content-length': '9' });
    expect(headers).toEqual({ 'anthropic-beta': 'b1', 'x-api-key': 'sk-ant', 'content-type': 'application/json', 'accept-encoding': 'identity' });
  });

  it('passes the client provider key through, and has nothing to send without any', () => {
    expect(upstreamHeaders('openai', config, { authorization: 'Bearer cmp_key', 'x-compactd-upstream-key': 'sk-own' })?.['authorization']).toBe('Bearer sk-own');
    expect(upstreamHeaders('openai', config, { authorization: 'Bearer cmp_key' })).toBeNull();
  });

  it('recognises context overflows and the sizes they name', () => {
    const anthropic = '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}';
    expect(isContextOverflow('anthropic', 400, anthropic)).toBe(true);
    expect(isContextOverflow('anthropic', 400, '{"error":{"message":"messages: roles must alternate"}}')).toBe(false);
    expect(isContextOverflow('openai', 400, '{"error":{"code":"context_length_exceeded"}}')).toBe(true);
    expect(overflowSizes(anthropic)).toEqual({ prompt: 208310, window: 200000 });
    expect(overflowSizes("This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.")).toEqual({ prompt: 130512, window: 128000 });
    expect(overflowTarget(150_000, { prompt: 208_310, window: 200_000 })).toBe(150_000 - 8_310 - 40_000);
  });
});
