import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApi, type TestApi } from '../../helpers/api.js';

let t: TestApi;
beforeAll(async () => {
  t = await createTestApi();
});
afterAll(async () => {
  await t?.close();
});

async function createConversation(id: string, body: Record<string, unknown> = {}) {
  const res = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id, ...body } });
  expect(res.statusCode).toBe(201);
  return res.json();
}

function append(id: string, payload: unknown, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: `/v1/conversations/${id}/messages`,
    headers: { ...t.auth(), ...headers },
    payload: payload as object,
  });
}

async function storedCount(id: string) {
  const res = await t.app.inject({ method: 'GET', url: `/v1/conversations/${id}`, headers: t.auth() });
  return res.json().messageCount as number;
}

const openaiExchange = [
  { role: 'system', content: 'You are a careful agent.' },
  { role: 'user', content: 'What is in /etc/hosts?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"/etc/hosts"}' } }],
  },
  { role: 'tool', tool_call_id: 'call_1', content: '127.0.0.1 localhost' },
  { role: 'assistant', content: 'It maps localhost to 127.0.0.1.' },
];

describe('conversations', () => {
  it('creates with a client id, reports counts, and answers 409 for an existing id', async () => {
    const created = await createConversation('conv-a', { model: 'claude-sonnet-4-5' });
    expect(created).toMatchObject({ id: 'conv-a', model: 'claude-sonnet-4-5', messageCount: 0, activeTokens: 0, lastJob: null });
    expect(created.contextLimit).toBeGreaterThanOrEqual(200_000);
    const again = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id: 'conv-a' } });
    expect(again.statusCode).toBe(409);
    expect(again.headers['content-type']).toContain('application/problem+json');
    expect(again.json()).toMatchObject({ code: 'CONVERSATION_EXISTS', status: 409 });
  });

  it('generates a UUID when no id is given and rejects a bad id or policy naming the field', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: {} });
    expect(res.statusCode).toBe(201);
    expect(res.json().id).toMatch(/^[0-9a-f-]{36}$/);
    const bad = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id: 'has space' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].field).toBe('body.id');
    const badPolicy = await t.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: t.auth(),
      payload: { policy: { triggerRatio: 7 } },
    });
    expect(badPolicy.statusCode).toBe(400);
    expect(badPolicy.json().errors[0].field).toBe('body.policy.triggerRatio');
  });
});

describe('append and read back', () => {
  it('round-trips an OpenAI tool exchange into both context formats with pairing intact', async () => {
    await createConversation('rt-openai');
    const res = await append('rt-openai', { format: 'openai', messages: openaiExchange });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.messages.map((m: { seq: number }) => m.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(body.messages.every((m: { tokens: number }) => m.tokens > 0)).toBe(true);
    expect(body.activeTokens).toBe(body.messages.reduce((s: number, m: { tokens: number }) => s + m.tokens, 0));
    expect(body.compaction).toBeNull();

    const anthropic = (
      await t.app.inject({ method: 'GET', url: '/v1/conversations/rt-openai/context?format=anthropic', headers: t.auth() })
    ).json();
    expect(anthropic.system).toBe('You are a careful agent.');
    expect(anthropic.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(anthropic.messages[1].content[0]).toEqual({ type: 'tool_use', id: 'call_1', name: 'read_file', input: { path: '/etc/hosts' } });
    expect(anthropic.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'call_1', content: '127.0.0.1 localhost' });

    const openai = (
      await t.app.inject({ method: 'GET', url: '/v1/conversations/rt-openai/context?format=openai', headers: t.auth() })
    ).json();
    expect(openai.messages).toEqual([
      { role: 'system', content: 'You are a careful agent.' },
      { role: 'user', content: 'What is in /etc/hosts?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"/etc/hosts"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '127.0.0.1 localhost' },
      { role: 'assistant', content: 'It maps localhost to 127.0.0.1.' },
    ]);
  });

  it('round-trips an Anthropic exchange with parallel tool calls', async () => {
    await createConversation('rt-anthropic');
    const messages = [
      { role: 'user', content: 'List two dirs' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Listing both.' },
          { type: 'tool_use', id: 'toolu_a', name: 'ls', input: { path: '/a' } },
          { type: 'tool_use', id: 'toolu_b', name: 'ls', input: { path: '/b' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: 'x.txt' },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: [{ type: 'text', text: 'y.txt' }], is_error: false },
        ],
      },
    ];
    expect((await append('rt-anthropic', { messages })).statusCode).toBe(201);
    const list = (await t.app.inject({ method: 'GET', url: '/v1/conversations/rt-anthropic/messages', headers: t.auth() })).json();
    expect(list.messages.map((m: { content: unknown }) => m.content)).toEqual([
      [{ type: 'text', text: 'List two dirs' }],
      messages[1]!.content,
      messages[2]!.content,
    ]);
    expect(list.messages[0]).toMatchObject({ seq: 1, role: 'user', kind: 'message' });
    const openai = (
      await t.app.inject({ method: 'GET', url: '/v1/conversations/rt-anthropic/context?format=openai', headers: t.auth() })
    ).json();
    expect(openai.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    expect(openai.messages[1].tool_calls).toHaveLength(2);
  });

  it('paginates the active history by seq', async () => {
    await createConversation('paged');
    const messages = Array.from({ length: 25 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` }));
    expect((await append('paged', { messages })).statusCode).toBe(201);
    const first = (await t.app.inject({ method: 'GET', url: '/v1/conversations/paged/messages?limit=10', headers: t.auth() })).json();
    expect(first.messages).toHaveLength(10);
    expect(first.nextAfter).toBe(10);
    const last = (
      await t.app.inject({ method: 'GET', url: '/v1/conversations/paged/messages?after=20&limit=10', headers: t.auth() })
    ).json();
    expect(last.messages.map((m: { seq: number }) => m.seq)).toEqual([21, 22, 23, 24, 25]);
    expect(last.nextAfter).toBeNull();
  });
});

describe('rejections store nothing', () => {
  const cases: Array<[string, unknown, number, string]> = [
    ['unknown role', { messages: [{ role: 'robot', content: 'hi' }] }, 400, 'messages.0.role'],
    [
      'orphan tool_result',
      {
        messages: [
          { role: 'user', content: 'ok' },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope', content: 'x' }] },
        ],
      },
      400,
      'messages.1.content.0.tool_use_id',
    ],
    ['NUL character', { messages: [{ role: 'user', content: 'a\u0000b' }] }, 400, 'messages.0.content'],
    ['lone surrogate', { messages: [{ role: 'user', content: 'a\ud800b' }] }, 400, 'messages.0.content'],
    ['empty append', { messages: [] }, 400, 'body.messages'],
    ['too many messages', { messages: Array.from({ length: 1001 }, () => ({ role: 'user', content: 'x' })) }, 400, 'body.messages'],
    ['unknown format', { format: 'gemini', messages: [{ role: 'user', content: 'x' }] }, 400, 'body.format'],
    [
      'tool_use in a user message',
      { messages: [{ role: 'user', content: [{ type: 'tool_use', id: 't', name: 'x', input: {} }] }] },
      400,
      'messages.0.content.0',
    ],
    ['openai tool message without id', { format: 'openai', messages: [{ role: 'tool', content: 'x' }] }, 400, 'messages.0.tool_call_id'],
  ];
  it.each(cases)('%s → %s naming %s', async (_name, payload, status, field) => {
    await createConversation(`rej-${status}-${field.replaceAll('.', '-')}-${Math.abs(hash(_name))}`).then(async (c) => {
      const ok = await append(c.id, { messages: [{ role: 'user', content: 'first' }] });
      expect(ok.statusCode).toBe(201);
      const res = await append(c.id, payload);
      expect(res.statusCode).toBe(status);
      expect(res.headers['content-type']).toContain('application/problem+json');
      const problem = res.json();
      expect(problem.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(await storedCount(c.id)).toBe(1);
    });
  });

  // An append asking few tool ids is checked through the ids' GIN indexes, one asking many through
  // a join with the conversation's ids (messages.ts askedAmong): the padding of answered calls puts
  // every case on the second path too.
  it.each([
    ['a few ids', 0],
    ['many ids', 20],
  ])(
    'checks tool pairing against earlier appends (%s): answers an earlier tool_use, rejects a reused id or a second result',
    async (_label, padding) => {
      const id = `pairing-across-${padding}`;
      await createConversation(id);
      const use = (toolId: string) => ({
        role: 'assistant',
        content: [{ type: 'tool_use', id: toolId, name: 'bash', input: { cmd: 'ls' } }],
      });
      const result = (toolId: string) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: toolId, content: 'ok' }] });
      let padded = 0;
      const pad = (messages: unknown[]) => {
        const extra = Array.from({ length: padding }, () => `pad-${padded++}`).flatMap((toolId) => [use(toolId), result(toolId)]);
        return { messages: [...messages, ...extra] };
      };
      expect((await append(id, pad([{ role: 'user', content: 'go' }, use('t-1'), use('t-2')]))).statusCode).toBe(201);
      expect((await append(id, pad([result('t-1')]))).statusCode).toBe(201);
      const cases: Array<[unknown[], string, string]> = [
        [[result('t-2'), use('t-1')], 'DUPLICATE_TOOL_USE_ID', 'messages.1.content.0.id'],
        [[result('t-2'), result('t-1')], 'DUPLICATE_TOOL_RESULT', 'messages.1.content.0.tool_use_id'],
        [[result('t-3')], 'ORPHAN_TOOL_RESULT', 'messages.0.content.0.tool_use_id'],
      ];
      for (const [messages, code, field] of cases) {
        const res = await append(id, pad(messages));
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({ code, errors: [{ field }] });
      }
      expect(await storedCount(id)).toBe(4 + 4 * padding);
      expect((await append(id, pad([result('t-2'), use('t-3'), result('t-3')]))).statusCode).toBe(201);
    },
  );

  it('rejects a whole append when a later message is bad (first messages not stored)', async () => {
    await createConversation('atomic');
    const res = await append('atomic', {
      messages: [
        { role: 'user', content: 'fine' },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'ghost', content: '' }] },
      ],
    });
    expect(res.statusCode).toBe(400);
    expect(await storedCount('atomic')).toBe(0);
  });

  it('answers 413 for an oversized message and for an oversized body', async () => {
    const small = await createTestApi({}, { COMPACTD_MAX_MESSAGE_BYTES: '1024', COMPACTD_MAX_BODY_BYTES: '4096' });
    try {
      await small.app.inject({ method: 'POST', url: '/v1/conversations', headers: small.auth(), payload: { id: 'big' } });
      const message = await small.app.inject({
        method: 'POST',
        url: '/v1/conversations/big/messages',
        headers: small.auth(),
        payload: { messages: [{ role: 'user', content: 'x'.repeat(2000) }] },
      });
      expect(message.statusCode).toBe(413);
      expect(message.json().errors[0].field).toBe('messages.0');
      const body = await small.app.inject({
        method: 'POST',
        url: '/v1/conversations/big/messages',
        headers: small.auth(),
        payload: { messages: Array.from({ length: 10 }, () => ({ role: 'user', content: 'y'.repeat(800) })) },
      });
      expect(body.statusCode).toBe(413);
      expect(body.headers['content-type']).toContain('application/problem+json');
    } finally {
      await small.close();
    }
  });

  it('answers 400 problem+json for malformed JSON and 415 for another content type', async () => {
    await createConversation('malformed');
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/conversations/malformed/messages',
      headers: { ...t.auth(), 'content-type': 'application/json' },
      payload: '{"messages": [',
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    const text = await t.app.inject({
      method: 'POST',
      url: '/v1/conversations/malformed/messages',
      headers: { ...t.auth(), 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(text.statusCode).toBe(415);
    expect(await storedCount('malformed')).toBe(0);
  });
});

describe('idempotency and concurrency', () => {
  it('replays the first response for a repeated Idempotency-Key and stores once', async () => {
    await createConversation('idem');
    const payload = { messages: [{ role: 'user', content: 'once' }] };
    const first = await append('idem', payload, { 'idempotency-key': 'k-1' });
    const second = await append('idem', payload, { 'idempotency-key': 'k-1' });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.json()).toEqual(first.json());
    expect(await storedCount('idem')).toBe(1);
    const reused = await append('idem', { messages: [{ role: 'user', content: 'different' }] }, { 'idempotency-key': 'k-1' });
    expect(reused.statusCode).toBe(422);
  });

  it('stores a storm of concurrent appends with one Idempotency-Key once', async () => {
    await createConversation('idem-storm');
    const payload = { messages: [{ role: 'user', content: 'storm' }] };
    const responses = await Promise.all(Array.from({ length: 40 }, () => append('idem-storm', payload, { 'idempotency-key': 'storm' })));
    expect(responses.map((r) => r.statusCode)).toEqual(responses.map(() => 201));
    expect(new Set(responses.map((r) => r.body)).size).toBe(1);
    expect(await storedCount('idem-storm')).toBe(1);
  });

  it('gives 20 concurrent clients distinct increasing seqs and loses none', async () => {
    await createConversation('concurrent');
    const clients = Array.from({ length: 20 }, (_, c) =>
      (async () => {
        const seqs: number[] = [];
        for (let i = 0; i < 5; i++) {
          const res = await append('concurrent', {
            messages: [
              { role: 'user', content: `c${c}-${i}-a` },
              { role: 'assistant', content: `c${c}-${i}-b` },
            ],
          });
          expect(res.statusCode).toBe(201);
          seqs.push(...res.json().messages.map((m: { seq: number }) => m.seq));
        }
        return seqs;
      })(),
    );
    const perClient = await Promise.all(clients);
    for (const seqs of perClient) expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const all = perClient.flat();
    expect(new Set(all).size).toBe(200);
    expect(Math.max(...all)).toBe(200);
    const listed = (
      await t.app.inject({ method: 'GET', url: '/v1/conversations/concurrent/messages?limit=1000', headers: t.auth() })
    ).json();
    expect(listed.messages).toHaveLength(200);
    // each message of a two-message append sits at consecutive seqs
    for (let i = 0; i < 200; i += 2) {
      expect(listed.messages[i].content[0].text.replace(/-a$/, '')).toBe(listed.messages[i + 1].content[0].text.replace(/-b$/, ''));
    }
  });
});

function hash(s: string): number {
  let h = 0;
  for (const ch of s) h = (h * 31 + ch.charCodeAt(0)) | 0;
  return h;
}
