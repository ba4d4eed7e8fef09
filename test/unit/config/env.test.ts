import { describe, expect, it } from 'vitest';

import { ConfigError, loadConfig } from '../../../src/config/env.js';

describe('loadConfig', () => {
  it('works with nothing set, on the local services', () => {
    const config = loadConfig({});
    expect(config.databaseUrl).toBe('postgres://postgres@127.0.0.1:5432/compactd');
    expect(config.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(config).toMatchObject({ host: '127.0.0.1', port: 8080, summarizer: { provider: 'local', model: undefined, explicit: false } });
  });

  it('parses provider:model summarizers, keeping colons inside the model name', () => {
    expect(loadConfig({ COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5' }).summarizer).toEqual({
      provider: 'anthropic',
      model: 'claude-haiku-4-5',
      explicit: true,
    });
    expect(loadConfig({ COMPACTD_SUMMARIZER: 'openai:llama3:8b' }).summarizer).toEqual({
      provider: 'openai',
      model: 'llama3:8b',
      explicit: true,
    });
  });

  it('tells an explicit COMPACTD_SUMMARIZER=local from the default (an empty value is unset)', () => {
    expect(loadConfig({ COMPACTD_SUMMARIZER: 'local' }).summarizer).toEqual({ provider: 'local', model: undefined, explicit: true });
    expect(loadConfig({ COMPACTD_SUMMARIZER: '' }).summarizer).toEqual({ provider: 'local', model: undefined, explicit: false });
  });

  it('caps open long-polls per tenant at 3000 unless COMPACTD_TENANT_MAX_WAITERS says otherwise', () => {
    expect(loadConfig({}).longPoll).toEqual({ maxWaitersPerTenant: 3000 });
    expect(loadConfig({ COMPACTD_TENANT_MAX_WAITERS: '10' }).longPoll).toEqual({ maxWaitersPerTenant: 10 });
    expect(() => loadConfig({ COMPACTD_TENANT_MAX_WAITERS: '0' })).toThrow(/COMPACTD_TENANT_MAX_WAITERS/);
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '', LOG_PRETTY: '' }).port).toBe(8080);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'not a url'],
    ['COMPACTD_SUMMARIZER', 'gemini'],
    ['LOG_PRETTY', 'maybe'],
    ['COMPACTD_BOOTSTRAP_KEY', 'short'],
    ['COMPACTD_WEBHOOK_ALLOW', 'hooks.internal, not a host'],
    ['COMPACTD_WEBHOOK_ALLOW', '10.0.0.0/33'],
    ['COMPACTD_FAULT_PAUSE_BEFORE_DISPATCH_MS', '-1'],
  ])('names the bad variable %s=%s', (name, value) => {
    try {
      loadConfig({ [name]: value });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).issues[0]).toMatch(new RegExp(`^${name}: `));
    }
  });

  it('reads booleans strictly: "false" is false', () => {
    expect(loadConfig({ LOG_PRETTY: 'false' }).logPretty).toBe(false);
    expect(loadConfig({ LOG_PRETTY: 'true' }).logPretty).toBe(true);
  });

  it('reads the webhook allow-list: host names, addresses and CIDR ranges; none by default', () => {
    expect(loadConfig({}).webhooks.allow).toEqual({ hosts: [], ranges: [] });
    const allow = loadConfig({ COMPACTD_WEBHOOK_ALLOW: ' Hooks.Internal. , 127.0.0.1,10.0.0.0/8,[::1],fd00::/8' }).webhooks.allow;
    expect(allow.hosts).toEqual(['hooks.internal']);
    expect(allow.ranges.map((r) => [r.version, r.prefixLength])).toEqual([
      [4, 32],
      [4, 8],
      [6, 128],
      [6, 8],
    ]);
  });

  it('leaves every fault-injection point off unless a test sets it', () => {
    expect(loadConfig({}).faults).toEqual({ pauseBeforeDispatchMs: 0 });
    expect(loadConfig({ COMPACTD_FAULT_PAUSE_BEFORE_DISPATCH_MS: '250' }).faults.pauseBeforeDispatchMs).toBe(250);
  });

  it('keeps 2 provider slots from any one tenant by default while others are active; the variable is bounded', () => {
    expect(loadConfig({}).llm.tenantReservedSlots).toBe(2);
    expect(loadConfig({ COMPACTD_TENANT_RESERVED_LLM_SLOTS: '0' }).llm.tenantReservedSlots).toBe(0);
    expect(() => loadConfig({ COMPACTD_TENANT_RESERVED_LLM_SLOTS: '-1' })).toThrow(/COMPACTD_TENANT_RESERVED_LLM_SLOTS/);
  });
});
