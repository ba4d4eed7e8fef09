import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { tenants } from '../../../src/db/schema.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';

let t: TestApi;
beforeAll(async () => {
  t = await createTestApi();
});
afterAll(async () => {
  await t?.close();
});

const get = (url: string, headers: Record<string, string> = t.auth()) => t.app.inject({ method: 'GET', url, headers });

describe('GET /v1/tools/:name', () => {
  it('serves compact and recall in Anthropic format by default and in OpenAI format on request', async () => {
    const compact = await get('/v1/tools/compact');
    expect(compact.statusCode).toBe(200);
    expect(compact.json()).toMatchObject({ name: 'compact', input_schema: { type: 'object', properties: { focus: { type: 'string' } } } });
    const recall = await get('/v1/tools/recall?format=openai');
    expect(recall.json()).toMatchObject({
      type: 'function',
      function: { name: 'recall', parameters: { type: 'object', required: ['query'] } },
    });
    expect((await get('/v1/tools/recall?format=anthropic')).json().description).toBe(recall.json().function.description);
  });

  it("states the tenant's own minimum for compact", async () => {
    const before = (await get('/v1/tools/compact')).json().description as string;
    expect(before).toContain('fewer than 10,000 tokens');
    const [tenant] = await t.db.db.select().from(tenants).where(eq(tenants.name, 't1'));
    await t.db.db
      .update(tenants)
      .set({ policy: { toolMinTokens: 40_000 } })
      .where(eq(tenants.id, tenant!.id));
    expect((await get('/v1/tools/compact?format=openai')).json().function.description).toContain('fewer than 40,000 tokens');
    // another tenant keeps the default
    expect((await get('/v1/tools/compact', t.auth(t.otherKey))).json().description).toContain('fewer than 10,000 tokens');
  });

  it('needs an API key and a known format', async () => {
    expect((await get('/v1/tools/compact', {})).statusCode).toBe(401);
    const bad = await get('/v1/tools/recall?format=gemini');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].field).toBe('querystring.format');
    expect((await get('/v1/tools/summarize')).statusCode).toBe(404);
  });
});

describe('OpenAPI', () => {
  it('documents the archive and tool routes, the export as NDJSON', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    const { paths } = res.json() as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
    };
    for (const path of [
      '/v1/conversations/{id}/batches',
      '/v1/batches/{id}',
      '/v1/batches/{id}/messages',
      '/v1/conversations/{id}/export',
      '/v1/conversations/{id}/archive/search',
      '/v1/tools/compact',
      '/v1/tools/recall',
    ]) {
      expect(paths[path]?.['get'], path).toBeDefined();
    }
    expect(Object.keys(paths['/v1/conversations/{id}/export']!['get']!.responses['200']!.content!)).toEqual(['application/x-ndjson']);
  });
});
