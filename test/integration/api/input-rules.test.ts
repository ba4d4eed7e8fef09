import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApi, type TestApi } from '../../helpers/api.js';

/**
 * The one input rule for strings (no NUL, no unpaired surrogate, bounded), bounded free-form
 * JSON, strict UTF-8 bodies and ids: every case is a 400 problem naming the field, and
 * nothing is stored.
 */

let t: TestApi;
beforeAll(async () => {
  t = await createTestApi();
  const created = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id: 'rules-a' } });
  expect(created.statusCode).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

const BAD_TEXT: Array<[string, string]> = [
  ['NUL', 'a\u0000b'],
  ['a lone high surrogate', 'x\uD800y'],
  ['a lone low surrogate', '\uDC00'],
  ['surrogates in the wrong order', '\uDC00\uD800'],
];

function deep(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

async function conversationCount(): Promise<number> {
  const [row] = await t.db.sql<Array<{ n: number }>>`select count(*)::int as n from conversations`;
  return row?.n ?? -1;
}

function expectProblem(res: { statusCode: number; headers: Record<string, unknown>; json(): unknown }, status: number, field: string) {
  expect(res.statusCode, JSON.stringify(res.json())).toBe(status);
  expect(String(res.headers['content-type'])).toContain('application/problem+json');
  const body = res.json() as { errors?: Array<{ field: string }> };
  expect(body.errors?.map((e) => e.field)).toContain(field);
}

describe('strings outside messages', () => {
  const bodyCases: Array<[string, string, string, (text: string) => Record<string, unknown>]> = [
    ['conversation model', 'POST', '/v1/conversations', (text) => ({ model: text })],
    ['metadata value', 'POST', '/v1/conversations', (text) => ({ metadata: { note: { deeper: [text] } } })],
    ['metadata key', 'POST', '/v1/conversations', (text) => ({ metadata: { [text]: 1 } })],
    ['policy.systemPrompt', 'POST', '/v1/conversations', (text) => ({ policy: { systemPrompt: text } })],
    ['policy.model', 'POST', '/v1/conversations', (text) => ({ policy: { model: text } })],
    ['policy keyword', 'POST', '/v1/conversations', (text) => ({ policy: { scoring: { keywords: ['error', text] } } })],
    ['compaction focus', 'POST', '/v1/conversations/rules-a/compactions', (text) => ({ focus: text })],
    ['compaction model', 'POST', '/v1/conversations/rules-a/compactions', (text) => ({ model: text })],
    ['webhook secret', 'PUT', '/v1/webhook', (text) => ({ url: 'https://hooks.example/x', secret: `0123456789abcdef${text}` })],
    ['patched metadata', 'PATCH', '/v1/conversations/rules-a', (text) => ({ metadata: { x: text } })],
  ];
  const fieldOf: Record<string, string> = {
    'conversation model': 'body.model',
    'metadata value': 'body.metadata.note.deeper.0',
    'metadata key': 'body.metadata',
    'policy.systemPrompt': 'body.policy.systemPrompt',
    'policy.model': 'body.policy.model',
    'policy keyword': 'body.policy.scoring.keywords.1',
    'compaction focus': 'body.focus',
    'compaction model': 'body.model',
    'webhook secret': 'body.secret',
    'patched metadata': 'body.metadata.x',
  };

  it.each(
    bodyCases.flatMap(([name, method, url, build]) => BAD_TEXT.map(([what, text]) => [name, what, method, url, build(text)] as const)),
  )('%s with %s is a 400 naming the field', async (name, _what, method, url, payload) => {
    const before = await conversationCount();
    const res = await t.app.inject({ method: method as 'POST', url, headers: t.auth(), payload });
    const field = fieldOf[name] as string;
    if (name === 'metadata key') {
      expect(res.statusCode).toBe(400);
      expect((res.json() as { errors: Array<{ field: string }> }).errors[0]?.field.startsWith(field)).toBe(true);
    } else {
      expectProblem(res, 400, field);
    }
    expect(await conversationCount()).toBe(before);
  });

  it.each([
    ['archive search q with NUL', '/v1/conversations/rules-a/archive/search?q=a%00b', 'querystring.q'],
    ['delivery log conversationId with NUL', '/v1/webhooks/deliveries?conversationId=a%00b', 'querystring.conversationId'],
    ['delivery log conversationId ".."', '/v1/webhooks/deliveries?conversationId=..', 'querystring.conversationId'],
  ])('query parameters: %s is a 400 naming the parameter', async (_name, url, field) => {
    expectProblem(await t.app.inject({ method: 'GET', url, headers: t.auth() }), 400, field);
  });

  it('answers the bytes of a lone surrogate in a query (not UTF-8) below 500', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/conversations/rules-a/archive/search?q=%ED%A0%80', headers: t.auth() });
    expect(res.statusCode).toBeLessThan(500);
  });

  it('bounds strings: a 1 MB focus or model is a 400, not a 500', async () => {
    const huge = 'x'.repeat(1024 * 1024);
    expectProblem(
      await t.app.inject({ method: 'POST', url: '/v1/conversations/rules-a/compactions', headers: t.auth(), payload: { focus: huge } }),
      400,
      'body.focus',
    );
    expectProblem(
      await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { model: huge } }),
      400,
      'body.model',
    );
  });
});

describe('free-form JSON', () => {
  it('refuses metadata nested 5,000 levels deep (the body, as parsed) or 200 (the field), and accepts 20 levels', async () => {
    // As text: the injector's own serializer recurses and would overflow first.
    const nested = (levels: number) => `{"metadata":${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}`;
    const json = { ...t.auth(), 'content-type': 'application/json' };
    const tooDeep = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: json, payload: nested(5_000) });
    expect(tooDeep.statusCode).toBe(400);
    expect(tooDeep.json()).toMatchObject({ code: 'BODY_TOO_DEEP', errors: [{ field: 'body' }] });
    const res = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: json, payload: nested(200) });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].field).toMatch(/^body\.metadata(\.a)+$/);
    expect(res.json().errors[0].message).toMatch(/nest deeper than 32/);
    const ok = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { metadata: deep(20) } });
    expect(ok.statusCode).toBe(201);
  });

  it('refuses metadata over 64 KB as JSON', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: t.auth(),
      payload: { metadata: { blob: 'z'.repeat(70_000) } },
    });
    expectProblem(res, 400, 'body.metadata');
  });
});

describe('bytes and ids', () => {
  it('takes a bodiless request sent with a JSON content type as having no body', async () => {
    const json = { ...t.auth(), 'content-type': 'application/json' };
    const created = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: json, payload: { id: 'bodiless' } });
    expect(created.statusCode).toBe(201);
    // a route whose body is optional takes none
    const compaction = await t.app.inject({ method: 'POST', url: '/v1/conversations/bodiless/compactions', headers: json, payload: '' });
    expect(compaction.statusCode, compaction.body).toBe(202);
    const again = await t.app.inject({ method: 'POST', url: '/v1/conversations/bodiless/compactions', headers: t.auth() });
    expect(again.statusCode, again.body).toBe(200);
    // a route that needs a body says so, naming it
    const append = await t.app.inject({ method: 'POST', url: '/v1/conversations/bodiless/messages', headers: json, payload: '' });
    expectProblem(append, 400, 'body');
    const cancelled = await t.app.inject({ method: 'DELETE', url: `/v1/jobs/${compaction.json().id}`, headers: json, payload: '' });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json().status).toBe('cancelled');
  });

  it('answers invalid UTF-8 in a JSON body with a 400 problem, and stores nothing', async () => {
    const before = await conversationCount();
    const payload = Buffer.concat([Buffer.from('{"id":"utf8-bad","metadata":{"x":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}}')]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: { ...t.auth(), 'content-type': 'application/json' },
      payload,
    });
    expectProblem(res, 400, 'body');
    expect(res.json().code).toBe('INVALID_UTF8');
    expect(await conversationCount()).toBe(before);
    const fine = await t.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: { ...t.auth(), 'content-type': 'application/json' },
      payload: Buffer.from('{"id":"utf8-good","metadata":{"x":"héllo 🙂"}}', 'utf8'),
    });
    expect(fine.statusCode).toBe(201);
    expect(fine.json().metadata).toEqual({ x: 'héllo 🙂' });
  });

  it.each(['.', '..'])('refuses the id %j, which URL resolution would turn into another path', async (id) => {
    expectProblem(await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id } }), 400, 'body.id');
  });

  it('keeps dots inside ids', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id: '...v1.2_x-y' } });
    expect(res.statusCode).toBe(201);
  });
});
