import { createServer, type IncomingHttpHeaders, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { checkModelAccess, loadModelAccess } from '../../../src/api/gateway/model-access.js';
import { runTenants } from '../../../src/app/cli/tenants.js';
import { loadConfig } from '../../../src/config/env.js';
import { getTenantIdByName } from '../../../src/db/repos/tenant-quotas.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * What crosses the gateway besides the body (issue 32, "forward by allow-list"): the request
 * headers llm-sim receives, the response headers the tenant gets back, a provider redirect,
 * and which models and server tools a tenant may use on compactd's provider key, over the
 * whole service with llm-sim as the provider.
 */

const ADMIN_TOKEN = 'admin-token-gateway-0123456789';
const TENANT = 'e2e';

let sim: TestLlmSim;
let stack: Stack;
let base: string;
/** OpenAI's base URL points here: every call is answered with a redirect to llm-sim */
let redirector: Server;
let redirected: number;

beforeAll(async () => {
  sim = await startTestLlmSim({ keepBodies: 100 });
  redirected = 0;
  redirector = createServer((req, res) => {
    redirected += 1;
    req.resume();
    res.writeHead(307, { location: `${sim.openaiBaseUrl}/chat/completions`, 'content-type': 'text/plain' }).end('moved');
  });
  await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
  stack = await createStack({
    env: {
      ANTHROPIC_BASE_URL: sim.url,
      ANTHROPIC_API_KEY: 'sk-ant-configured',
      OPENAI_BASE_URL: `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/v1`,
      OPENAI_API_KEY: 'sk-openai-configured',
      COMPACTD_SUMMARIZER: 'local',
      COMPACTD_ADMIN_TOKEN: ADMIN_TOKEN,
    },
  });
  base = await stack.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
  await new Promise<void>((resolve) => (redirector ? redirector.close(() => resolve()) : resolve()));
});
beforeEach(async () => {
  sim.control.reset();
  sim.control.configure({ responseHeaders: {} });
  redirected = 0;
  await setAccess({ models: null, serverTools: null });
});

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  json: Record<string, unknown>;
}

/** A raw HTTP/1.1 POST: fetch would refuse the hop-by-hop headers these tests send on purpose. */
function post(path: string, headers: Record<string, string>, body: unknown): Promise<Answer> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${base}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: Record<string, unknown>;
          try {
            json = JSON.parse(text) as Record<string, unknown>;
          } catch {
            json = { stream: text };
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const anthropicHeaders = (extra: Record<string, string> = {}) => ({ 'x-api-key': stack.key, 'anthropic-version': '2023-06-01', ...extra });
const message = (conversation: string, extra: Record<string, unknown> = {}) => ({
  model: 'claude-haiku-4-5',
  max_tokens: 100,
  messages: [{ role: 'user', content: `Why does src/lru.test.ts fail? (${conversation})` }],
  ...extra,
});
const upstreamHeadersOfCall = (index = 0) => sim.control.callLog()[index]?.headers ?? {};

async function setAccess(body: Record<string, unknown>, token = ADMIN_TOKEN) {
  return stack.app.inject({
    method: 'PUT',
    url: `/admin/tenants/${TENANT}/gateway-access`,
    headers: { authorization: `Bearer ${token}` },
    payload: body,
  });
}

describe('request headers the provider gets', () => {
  it("forwards the provider's own and the client's identity headers, nothing about the network or the client's credentials", async () => {
    const res = await post(
      '/gateway/anthropic/v1/messages',
      anthropicHeaders({
        'x-compactd-conversation': 'hdr-1',
        'anthropic-beta': 'prompt-caching-2024-07-31',
        'x-stainless-lang': 'js',
        'x-stainless-retry-count': '0',
        'user-agent': 'claude-cli/2.0.0 (external, cli)',
        'x-app': 'cli',
        'x-claude-code-session-id': 'b1c2',
        // none of these reaches the provider
        cookie: 'session=s3cret',
        'x-forwarded-for': '10.1.2.3',
        'x-forwarded-proto': 'https',
        'x-real-ip': '10.1.2.3',
        forwarded: 'for=10.1.2.3;proto=https',
        'x-forwarded-access-token': 'oauth-access-token',
        'cf-access-jwt-assertion': 'eyJhbGciOi.cf.jwt',
        'cf-connecting-ip': '10.1.2.3',
        'x-stainless-hop': 'named in Connection',
        connection: 'keep-alive, X-Stainless-Hop',
        'proxy-authorization': 'Basic cHJveHk6cHc=',
        'x-internal-route': 'blue',
      }),
      message('hdr-1'),
    );
    expect(res.status).toBe(200);
    const seen = upstreamHeadersOfCall();
    expect(seen).toMatchObject({
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'prompt-caching-2024-07-31',
      'x-stainless-lang': 'js',
      'x-stainless-retry-count': '0',
      'user-agent': 'claude-cli/2.0.0 (external, cli)',
      'x-app': 'cli',
      'x-claude-code-session-id': 'b1c2',
      'x-api-key': 'sk-ant-configured',
      'content-type': 'application/json',
    });
    for (const name of [
      'cookie',
      'x-forwarded-for',
      'x-forwarded-proto',
      'x-real-ip',
      'forwarded',
      'x-forwarded-access-token',
      'cf-access-jwt-assertion',
      'cf-connecting-ip',
      'x-stainless-hop',
      'proxy-authorization',
      'x-internal-route',
      'x-compactd-conversation',
      'authorization',
    ]) {
      expect(seen, name).not.toHaveProperty(name);
    }
    expect(JSON.stringify(seen)).not.toContain(stack.key);
  });

  it("sends the tenant's own provider key in place of compactd's, and never the header that carried it", async () => {
    const res = await post(
      '/gateway/anthropic/v1/messages',
      anthropicHeaders({ 'x-compactd-conversation': 'hdr-2', 'x-compactd-upstream-key': 'sk-ant-tenant' }),
      message('hdr-2'),
    );
    expect(res.status).toBe(200);
    expect(upstreamHeadersOfCall()['x-api-key']).toBe('sk-ant-tenant');
    expect(upstreamHeadersOfCall()).not.toHaveProperty('x-compactd-upstream-key');
  });
});

describe('response headers the tenant gets', () => {
  const providerHeaders = {
    'set-cookie': '__cf_bm=abc123; path=/; HttpOnly',
    'anthropic-organization-id': '4f1e-operator-org',
    'anthropic-ratelimit-requests-remaining': '3999',
    'anthropic-ratelimit-tokens-reset': '2026-01-01T00:00:00Z',
    'anthropic-custom-info': 'kept',
    'x-ratelimit-remaining-requests': '99',
    'cf-ray': '8f00-SJC',
    'x-envoy-upstream-service-time': '12',
    via: '1.1 google',
  };

  it("with compactd's key: the answer and its request id, without cookies, the organization or the operator's rate limits", async () => {
    sim.control.configure({ responseHeaders: providerHeaders });
    for (const stream of [false, true]) {
      const res = await post(
        '/gateway/anthropic/v1/messages',
        anthropicHeaders({ 'x-compactd-conversation': `resp-${stream}` }),
        message(`resp-${stream}`, { stream }),
      );
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toContain(stream ? 'text/event-stream' : 'application/json');
      if (!stream) expect(res.headers['request-id']).toMatch(/^req_sim_/);
      expect(res.headers['anthropic-custom-info']).toBe('kept');
      expect(res.headers['x-compactd-gateway']).toBe('compacted');
      for (const name of [
        'set-cookie',
        'anthropic-organization-id',
        'anthropic-ratelimit-requests-remaining',
        'anthropic-ratelimit-tokens-reset',
        'x-ratelimit-remaining-requests',
        'cf-ray',
        'x-envoy-upstream-service-time',
        'via',
      ]) {
        expect(res.headers, `${name} (stream ${stream})`).not.toHaveProperty(name);
      }
    }
  });

  it("with the tenant's own key: its rate limits too, still no cookie nor organization", async () => {
    sim.control.configure({ responseHeaders: providerHeaders });
    const res = await post(
      '/gateway/anthropic/v1/messages',
      anthropicHeaders({ 'x-compactd-conversation': 'resp-own', 'x-compactd-upstream-key': 'sk-ant-tenant' }),
      message('resp-own'),
    );
    expect(res.status).toBe(200);
    expect(res.headers['anthropic-ratelimit-requests-remaining']).toBe('3999');
    expect(res.headers['x-ratelimit-remaining-requests']).toBe('99');
    expect(res.headers).not.toHaveProperty('set-cookie');
    expect(res.headers).not.toHaveProperty('anthropic-organization-id');
  });

  it('keeps the retry advice of an error', async () => {
    sim.control.setFaults({ script: ['rate_limit'], retryAfterMs: 2_000 });
    const res = await post(
      '/gateway/anthropic/v1/messages',
      anthropicHeaders({ 'x-compactd-conversation': 'resp-429' }),
      message('resp-429'),
    );
    expect(res.status).toBe(429);
    expect(res.headers).toMatchObject({ 'retry-after': '2', 'retry-after-ms': '2000', 'x-should-retry': 'true' });
  });
});

// Needs routes.ts to call the provider with `redirect: 'manual'` (callUpstream); fetch follows the redirect otherwise.
describe('a provider that redirects', () => {
  it('is answered 502 in the provider shape; the redirect is not followed', async () => {
    const res = await post(
      '/gateway/openai/v1/chat/completions',
      { authorization: `Bearer ${stack.key}`, 'x-compactd-conversation': 'redir' },
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    );
    expect(res.status).toBe(502);
    expect(res.json).toMatchObject({ error: { type: 'server_error', message: expect.stringMatching(/redirect \(HTTP 307\)/) as unknown } });
    expect(res.headers).not.toHaveProperty('location');
    expect(redirected).toBe(1);
    expect(sim.control.callLog()).toHaveLength(0);
  });
});

// Needs routes.ts to call enforceModelAccess before forwarding (see model-access.ts).
describe("models and server tools on compactd's provider key", () => {
  const webSearch = { type: 'web_search_20250305', name: 'web_search', max_uses: 2 };

  it("refuses by default a model outside the registry's Anthropic models and any server tool, in Anthropic's error shape", async () => {
    const model = await post(
      '/gateway/anthropic/v1/messages',
      anthropicHeaders({ 'x-compactd-conversation': 'm-1' }),
      message('m-1', { model: 'gpt-4o' }),
    );
    expect(model.status).toBe(403);
    expect(model.json).toMatchObject({ type: 'error', error: { type: 'permission_error', field: 'body.model' } });
    const tool = await post(
      '/gateway/anthropic/v1/messages',
      anthropicHeaders({ 'x-compactd-conversation': 'm-2' }),
      message('m-2', { tools: [webSearch] }),
    );
    expect(tool.status).toBe(403);
    expect(tool.json).toMatchObject({ type: 'error', error: { type: 'permission_error', field: 'body.tools[0]' } });
    expect(sim.control.callLog()).toHaveLength(0);
  });

  it("follows the tenant's setting, and does not limit the tenant's own key", async () => {
    expect((await setAccess({ models: ['claude-sonnet-4-5'], serverTools: ['web_search_*'] })).statusCode).toBe(200);
    const refused = await post('/gateway/anthropic/v1/messages', anthropicHeaders({ 'x-compactd-conversation': 'm-3' }), message('m-3'));
    expect(refused.status).toBe(403);
    const allowed = await post(
      '/gateway/anthropic/v1/messages',
      anthropicHeaders({ 'x-compactd-conversation': 'm-4' }),
      message('m-4', { model: 'claude-sonnet-4-5-20250929', tools: [webSearch] }),
    );
    expect(allowed.status).toBe(200);
    const own = await post(
      '/gateway/anthropic/v1/messages',
      anthropicHeaders({ 'x-compactd-conversation': 'm-5', 'x-compactd-upstream-key': 'sk-ant-tenant' }),
      message('m-5', { model: 'gpt-4o', tools: [{ type: 'code_execution_20250522', name: 'code_execution' }] }),
    );
    expect(own.status).toBe(200);
    expect(sim.control.callLog().map((call) => call.model)).toEqual(['claude-sonnet-4-5-20250929', 'gpt-4o']);
  });
});

describe('the setting, read by the gateway', () => {
  it('is what the admin route stored, and the check keeps to it', async () => {
    const tenantId = (await getTenantIdByName(stack.deps.db, TENANT))!;
    expect(await loadModelAccess(stack.deps.db, tenantId)).toBeNull();
    expect(checkModelAccess('anthropic', message('x', { model: 'gpt-4o' }), null)).toMatchObject({ ok: false, field: 'body.model' });
    await setAccess({ models: ['gpt-4o'] });
    const access = await loadModelAccess(stack.deps.db, tenantId);
    expect(access).toEqual({ models: ['gpt-4o'], serverTools: null });
    expect(checkModelAccess('anthropic', message('x', { model: 'gpt-4o' }), access)).toEqual({ ok: true });
    expect(checkModelAccess('anthropic', message('x'), access)).toMatchObject({ ok: false, field: 'body.model' });
  });
});

describe('admin route /admin/tenants/:name/gateway-access', () => {
  it('needs the admin token', async () => {
    const res = await setAccess({ models: ['gpt-4o'] }, 'not-the-token');
    expect(res.statusCode).toBe(401);
    const asTenant = await stack.app.inject({ method: 'GET', url: `/admin/tenants/${TENANT}/gateway-access`, headers: stack.auth() });
    expect(asTenant.statusCode).toBe(401);
  });

  it('replaces the fields given, keeps the others, and null goes back to the default', async () => {
    expect((await setAccess({ models: ['claude-haiku-4-5'], serverTools: ['web_search_20250305'] })).json()).toEqual({
      tenant: TENANT,
      models: ['claude-haiku-4-5'],
      serverTools: ['web_search_20250305'],
    });
    expect((await setAccess({ models: null })).json()).toEqual({ tenant: TENANT, models: null, serverTools: ['web_search_20250305'] });
    const read = await stack.app.inject({
      method: 'GET',
      url: `/admin/tenants/${TENANT}/gateway-access`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(read.json()).toEqual({ tenant: TENANT, models: null, serverTools: ['web_search_20250305'] });
  });

  it('answers 400 problem+json naming the field of a bad entry, and 404 for an unknown tenant', async () => {
    const bad = await setAccess({ models: ['claude-haiku-4-5', 'not a model'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toContain('application/problem+json');
    expect(bad.json()).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', errors: [{ field: 'body.models.1' }] });
    const unknown = await setAccess({ modelz: ['gpt-4o'] });
    expect(unknown.statusCode).toBe(400);
    expect(JSON.stringify(unknown.json())).toContain('modelz');
    const missing = await stack.app.inject({
      method: 'PUT',
      url: '/admin/tenants/nobody/gateway-access',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { models: [] },
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'TENANT_NOT_FOUND', errors: [{ field: 'params.name' }] });
  });
});

describe('compactd tenants gateway-access', () => {
  it('sets and prints the setting, and names a bad option entry', async () => {
    const config = loadConfig(stack.env);
    const out: string[] = [];
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
    try {
      expect(
        await runTenants(config, ['gateway-access', TENANT, '--models', 'claude-haiku-4-5,gpt-4.1-*', '--server-tools', 'default']),
      ).toBe(0);
      expect(out.join('')).toContain('models claude-haiku-4-5, gpt-4.1-*; server tools default (none)');
      out.length = 0;
      expect(await runTenants(config, ['gateway-access', TENANT, '--models', 'ok-model,bad model'])).toBe(2);
      expect(out.join('')).toContain('--models entry "bad model": must be a model id');
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
    }
    const read = await stack.app.inject({
      method: 'GET',
      url: `/admin/tenants/${TENANT}/gateway-access`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(read.json()).toEqual({ tenant: TENANT, models: ['claude-haiku-4-5', 'gpt-4.1-*'], serverTools: null });
  });
});
