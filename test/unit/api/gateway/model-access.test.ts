import { describe, expect, it } from 'vitest';

import { checkModelAccess, entryMatches, GatewayAccessPatchSchema, isDefaultModel } from '../../../../src/api/gateway/model-access.js';

const messages = [{ role: 'user', content: 'hi' }];

describe('checkModelAccess', () => {
  it("allows by default the registry's models of the gateway provider's own vendor, dated snapshots included", () => {
    expect(checkModelAccess('anthropic', { model: 'claude-haiku-4-5', messages }, null)).toEqual({ ok: true });
    expect(checkModelAccess('anthropic', { model: 'claude-sonnet-4-5-20250929', messages }, null)).toEqual({ ok: true });
    expect(checkModelAccess('openai', { model: 'gpt-4o-mini-2024-07-18', messages }, { models: null, serverTools: null })).toEqual({
      ok: true,
    });
    expect(isDefaultModel('openai', 'claude-haiku-4-5')).toBe(false);
    // another vendor through a compatible endpoint must be listed
    expect(isDefaultModel('openai', 'gemini-2.5-flash')).toBe(false);
    const refused = checkModelAccess('anthropic', { model: 'gpt-4o', messages }, null);
    expect(refused).toMatchObject({ ok: false, field: 'body.model' });
    expect(refused.ok === false && refused.message).toMatch(
      /gpt-4o may not be used with compactd's provider key \(only the anthropic models of compactd's model registry\)/,
    );
    expect(checkModelAccess('anthropic', { model: 'my-finetune', messages }, null)).toMatchObject({ ok: false, field: 'body.model' });
  });

  it("keeps to the tenant's list when it has one: exact ids, their snapshots, prefixes", () => {
    const access = { models: ['claude-haiku-4-5', 'gpt-4.1-*', 'ft:gpt-4o-mini:acme::abc'], serverTools: null };
    for (const model of [
      'claude-haiku-4-5',
      'claude-haiku-4-5-20251001',
      'CLAUDE-HAIKU-4-5',
      'gpt-4.1-mini',
      'gpt-4.1-nano-2025-04-14',
      'ft:gpt-4o-mini:acme::abc',
    ]) {
      expect(checkModelAccess('openai', { model, messages }, access), model).toEqual({ ok: true });
    }
    for (const model of ['claude-sonnet-4-5', 'claude-haiku-4-5-fast', 'gpt-4.1', 'gpt-4o-mini']) {
      const verdict = checkModelAccess('openai', { model, messages }, access);
      expect(verdict, model).toMatchObject({ ok: false, field: 'body.model' });
      expect(verdict.ok === false && verdict.message).toContain("the models listed in this tenant's gateway access");
    }
    expect(checkModelAccess('anthropic', { model: 'anything', messages }, { models: ['*'], serverTools: null })).toEqual({ ok: true });
    expect(checkModelAccess('anthropic', { model: 'claude-haiku-4-5', messages }, { models: [], serverTools: null })).toMatchObject({
      ok: false,
    });
  });

  it('refuses a body without a model name', () => {
    expect(checkModelAccess('anthropic', { messages }, null)).toMatchObject({ ok: false, field: 'body.model' });
    expect(checkModelAccess('anthropic', { model: 42, messages }, null)).toMatchObject({ ok: false, field: 'body.model' });
    expect(checkModelAccess('anthropic', [], null)).toMatchObject({ ok: false, field: 'body' });
  });

  it('refuses Anthropic server tools unless listed, naming the tool; client tools pass', () => {
    const clientTool = { name: 'run_tests', description: 'Runs tests', input_schema: { type: 'object' } };
    const body = {
      model: 'claude-haiku-4-5',
      messages,
      tools: [clientTool, { type: 'custom', ...clientTool, name: 'b' }, { type: 'web_search_20250305', name: 'web_search', max_uses: 5 }],
    };
    const refused = checkModelAccess('anthropic', body, null);
    expect(refused).toMatchObject({ ok: false, field: 'body.tools[2]' });
    expect(refused.ok === false && refused.message).toMatch(/^tools\[2\]: the server tool web_search_20250305 may not be used/);
    expect(checkModelAccess('anthropic', body, { models: null, serverTools: ['web_search_20250305'] })).toEqual({ ok: true });
    expect(checkModelAccess('anthropic', body, { models: null, serverTools: ['web_search_*'] })).toEqual({ ok: true });
    expect(checkModelAccess('anthropic', body, { models: null, serverTools: ['code_execution_20250522'] })).toMatchObject({
      ok: false,
      field: 'body.tools[2]',
    });
    expect(
      checkModelAccess(
        'anthropic',
        { model: 'claude-haiku-4-5', messages, tools: [{ type: 7, name: 'x' }] },
        { models: null, serverTools: ['*'] },
      ),
    ).toEqual({ ok: true });
    expect(checkModelAccess('anthropic', { model: 'claude-haiku-4-5', messages, tools: [{ type: 7, name: 'x' }] }, null)).toMatchObject({
      ok: false,
      field: 'body.tools[0]',
    });
    // the MCP connector makes the provider call out: a server-side capability too
    expect(
      checkModelAccess(
        'anthropic',
        { model: 'claude-haiku-4-5', messages, mcp_servers: [{ type: 'url', url: 'https://mcp.example', name: 'x' }] },
        null,
      ),
    ).toMatchObject({
      ok: false,
      field: 'body.mcp_servers',
    });
  });

  it('treats OpenAI function and custom tools as the client’s, anything else (and web search) as the provider’s', () => {
    const fn = { type: 'function', function: { name: 'run_tests', parameters: { type: 'object' } } };
    expect(checkModelAccess('openai', { model: 'gpt-4o', messages, tools: [fn, { type: 'custom', custom: { name: 'x' } }] }, null)).toEqual(
      { ok: true },
    );
    expect(checkModelAccess('openai', { model: 'gpt-4o', messages, tools: [fn, { type: 'web_search_preview' }] }, null)).toMatchObject({
      ok: false,
      field: 'body.tools[1]',
    });
    expect(checkModelAccess('openai', { model: 'gpt-4o', messages, web_search_options: {} }, null)).toMatchObject({
      ok: false,
      field: 'body.web_search_options',
    });
    expect(
      checkModelAccess(
        'openai',
        { model: 'gpt-4o', messages, web_search_options: {} },
        { models: null, serverTools: ['web_search_options'] },
      ),
    ).toEqual({ ok: true });
  });
});

describe('entryMatches', () => {
  it('matches model snapshots only for models, prefixes for both', () => {
    expect(entryMatches('claude-3-5-sonnet', 'claude-3-5-sonnet@20240620', 'model')).toBe(true);
    expect(entryMatches('claude-3-5-sonnet', 'claude-3-5-sonnet-latest', 'model')).toBe(true);
    expect(entryMatches('claude-opus-4', 'claude-opus-4-5', 'model')).toBe(false);
    expect(entryMatches('web_search_20250305', 'web_search_20250305-20250101', 'tool')).toBe(false);
    expect(entryMatches('web_search_*', 'web_search_20250305', 'tool')).toBe(true);
  });
});

describe('GatewayAccessPatchSchema', () => {
  it('takes lists, null (back to the default) or nothing, and names a bad entry', () => {
    expect(GatewayAccessPatchSchema.parse({ models: ['claude-haiku-4-5', 'gpt-4.1-*'], serverTools: null })).toEqual({
      models: ['claude-haiku-4-5', 'gpt-4.1-*'],
      serverTools: null,
    });
    expect(GatewayAccessPatchSchema.parse({})).toEqual({});
    const bad = GatewayAccessPatchSchema.safeParse({ models: ['claude-haiku-4-5', 'bad model'] });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['models', 1]);
    expect(GatewayAccessPatchSchema.safeParse({ models: ['*-mini'] }).success).toBe(false);
    expect(GatewayAccessPatchSchema.safeParse({ model: ['x'] }).success).toBe(false);
    expect(GatewayAccessPatchSchema.safeParse({ serverTools: 'web_search_20250305' }).error?.issues[0]?.path).toEqual(['serverTools']);
  });
});
