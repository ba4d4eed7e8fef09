import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApi, type TestApi } from '../../helpers/api.js';

/**
 * A summarizer model that no configured provider serves is a 400 at request time, naming the
 * field (compaction `model`, policy `model`), instead of a job that quietly completes with the
 * local summarizer. Three deployments: local only, Anthropic's own API, an OpenAI-compatible server.
 */

let localOnly: TestApi;
let anthropic: TestApi;
let compatible: TestApi;
beforeAll(async () => {
  [localOnly, anthropic, compatible] = await Promise.all([
    createTestApi(),
    createTestApi({}, { ANTHROPIC_API_KEY: 'sk-ant-test-not-used' }),
    createTestApi({}, { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }),
  ]);
  for (const t of [localOnly, anthropic, compatible]) {
    const res = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id: 'm' } });
    expect(res.statusCode).toBe(201);
  }
});
afterAll(async () => {
  await Promise.all([localOnly, anthropic, compatible].map((t) => t?.close()));
});

async function compaction(t: TestApi, model: string) {
  return t.app.inject({ method: 'POST', url: '/v1/conversations/m/compactions', headers: t.auth(), payload: { model } });
}

async function createWithPolicyModel(t: TestApi, model: string) {
  return t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { policy: { model } } });
}

async function jobCount(t: TestApi): Promise<number> {
  const [row] = await t.db.sql<Array<{ n: number }>>`select count(*)::int as n from compaction_jobs`;
  return row?.n ?? -1;
}

describe('compaction request model', () => {
  it.each([
    ['openai:gpt-4o', /openai provider, which is not configured/],
    ['gpt-4o-mini', /openai provider, which is not configured/],
    ['anthropic:claude-haiku-4-5', /anthropic provider, which is not configured/],
    ['local:tiny', /the local summarizer has one model/],
  ])('refuses %s when only the local summarizer is configured', async (model, message) => {
    const before = await jobCount(localOnly);
    const res = await compaction(localOnly, model);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ code: 'MODEL_UNAVAILABLE', errors: [{ field: 'body.model' }] });
    expect(res.json().errors[0].message).toMatch(message);
    expect(await jobCount(localOnly)).toBe(before);
  });

  it('accepts the local summarizer by name', async () => {
    const res = await compaction(localOnly, 'local');
    expect(res.statusCode).toBe(202);
    expect((await localOnly.app.inject({ method: 'DELETE', url: `/v1/jobs/${res.json().id}`, headers: localOnly.auth() })).statusCode).toBe(
      200,
    );
  });

  it('against the vendor API, knows the registry: known models pass, unknown and foreign ones are refused', async () => {
    const known = await compaction(anthropic, 'anthropic:claude-haiku-4-5');
    expect(known.statusCode).toBe(202);
    expect(
      (await anthropic.app.inject({ method: 'DELETE', url: `/v1/jobs/${known.json().id}`, headers: anthropic.auth() })).statusCode,
    ).toBe(200);
    for (const [model, message] of [
      ['anthropic:claude-imaginary-9', /unknown model "claude-imaginary-9" for anthropic/],
      ['anthropic:gpt-4o', /gpt-4o is a model of openai, not served by anthropic/],
      ['openai:gpt-4o', /not configured/],
    ] as const) {
      const res = await compaction(anthropic, model);
      expect(res.statusCode, model).toBe(400);
      expect(res.json().errors[0]).toMatchObject({ field: 'body.model' });
      expect(res.json().errors[0].message).toMatch(message);
    }
  });

  it('behind a custom base URL, accepts any model name (vLLM, Ollama, proxies serve their own)', async () => {
    const res = await compaction(compatible, 'openai:qwen2.5-7b-instruct');
    expect(res.statusCode).toBe(202);
    expect(
      (await compatible.app.inject({ method: 'DELETE', url: `/v1/jobs/${res.json().id}`, headers: compatible.auth() })).statusCode,
    ).toBe(200);
    expect((await compaction(compatible, 'anthropic:claude-haiku-4-5')).statusCode).toBe(400);
  });
});

describe('policy model', () => {
  it('is checked at create and at PATCH, naming body.policy.model', async () => {
    const created = await createWithPolicyModel(localOnly, 'openai:gpt-4o');
    expect(created.statusCode).toBe(400);
    expect(created.json()).toMatchObject({ code: 'MODEL_UNAVAILABLE', errors: [{ field: 'body.policy.model' }] });
    const patched = await localOnly.app.inject({
      method: 'PATCH',
      url: '/v1/conversations/m',
      headers: localOnly.auth(),
      payload: { policy: { model: 'claude-haiku-4-5' } },
    });
    expect(patched.statusCode).toBe(400);
    expect(patched.json().errors[0].field).toBe('body.policy.model');
    expect((await createWithPolicyModel(anthropic, 'claude-haiku-4-5')).statusCode).toBe(201);
    expect((await createWithPolicyModel(compatible, 'llama3.1:8b')).statusCode).toBe(201);
  });
});
