import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { validateAnthropicRequest } from '../../../src/llm-sim/validate-anthropic.js';
import { validateOpenAIRequest } from '../../../src/llm-sim/validate-openai.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';

/**
 * Appends are stored as sent and GET /context places them (README "Messages and context"):
 * whatever order tool calls and results were appended in, both context formats are
 * requests the providers accept. What can never be placed — a result before (or without)
 * its call, a second result, a reused call id — is refused at append, naming the message
 * index and the call id.
 */

let t: TestApi;
beforeAll(async () => {
  t = await createTestApi();
});
afterAll(async () => {
  await t?.close();
});

const append = (id: string, messages: unknown[], format = 'anthropic') =>
  t.app.inject({ method: 'POST', url: `/v1/conversations/${id}/messages`, headers: t.auth(), payload: { format, messages } });

async function contexts(id: string) {
  const get = async (format: string) =>
    (await t.app.inject({ method: 'GET', url: `/v1/conversations/${id}/context?format=${format}`, headers: t.auth() })).json();
  return { anthropic: await get('anthropic'), openai: await get('openai') };
}

async function create(id: string) {
  expect((await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id } })).statusCode).toBe(201);
}

const use = (id: string, path: string) => ({ type: 'tool_use', id, name: 'Read', input: { path } });
const result = (id: string, content: string) => ({ type: 'tool_result', tool_use_id: id, content });

describe('GET /context places what was appended out of order', () => {
  it('parallel calls whose results arrive interleaved with other turns, over several appends', async () => {
    await create('interleaved');
    expect(
      (
        await append('interleaved', [
          { role: 'user', content: 'compare a.ts and b.ts' },
          { role: 'assistant', content: [use('toolu_a', 'a.ts'), use('toolu_b', 'b.ts')] },
        ])
      ).statusCode,
    ).toBe(201);
    expect(
      (
        await append('interleaved', [
          { role: 'user', content: [result('toolu_a', 'A')] },
          { role: 'assistant', content: 'b.ts is slow to read.' },
        ])
      ).statusCode,
    ).toBe(201);
    expect(
      (await append('interleaved', [{ role: 'user', content: [{ type: 'text', text: 'hurry' }, result('toolu_b', 'B')] }])).statusCode,
    ).toBe(201);

    const { anthropic, openai } = await contexts('interleaved');
    expect(validateAnthropicRequest(anthropic)).toBeNull();
    expect(validateOpenAIRequest(openai)).toBeNull();
    expect(anthropic.messages[2]).toEqual({ role: 'user', content: [result('toolu_a', 'A'), result('toolu_b', 'B')] });
    expect(openai.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant', 'user']);
  });

  it('a pending call, system messages mid-history and an assistant-first history', async () => {
    await create('pending');
    const messages = [
      { role: 'assistant', content: 'Hello, what shall we do?' },
      { role: 'system', content: 'Reminder: stay in the repo.' },
      { role: 'user', content: 'run the tests ' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Running.' },
          { type: 'tool_use', id: 'toolu_t', name: 'Bash', input: { command: 'npm test' } },
        ],
      },
    ];
    expect((await append('pending', messages)).statusCode).toBe(201);
    const { anthropic, openai } = await contexts('pending');
    expect(validateAnthropicRequest(anthropic)).toBeNull();
    expect(validateOpenAIRequest(openai)).toBeNull();
    expect(anthropic.system).toBe('Reminder: stay in the repo.');
    // the call is still running: it is shown as text until its result is appended
    expect(JSON.stringify(anthropic.messages.at(-1))).toContain('[tool call Bash id=toolu_t]');
    expect((await append('pending', [{ role: 'user', content: [result('toolu_t', '')] }])).statusCode).toBe(201);
    const after = await contexts('pending');
    expect(validateAnthropicRequest(after.anthropic)).toBeNull();
    expect(after.anthropic.messages.at(-1)).toEqual({ role: 'user', content: [result('toolu_t', '')] });
  });

  it('OpenAI-format tool calls with ids and arguments Anthropic would refuse', async () => {
    await create('odd-ids');
    const messages = [
      { role: 'user', content: 'look it up' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'functions.lookup:0', type: 'function', function: { name: 'lookup', arguments: 'not json' } }],
      },
      { role: 'tool', tool_call_id: 'functions.lookup:0', content: 'found' },
    ];
    expect((await append('odd-ids', messages, 'openai')).statusCode).toBe(201);
    const { anthropic, openai } = await contexts('odd-ids');
    expect(validateAnthropicRequest(anthropic)).toBeNull();
    expect(validateOpenAIRequest(openai)).toBeNull();
    expect(openai.messages[1].tool_calls[0]).toEqual({
      id: 'functions.lookup:0',
      type: 'function',
      function: { name: 'lookup', arguments: 'not json' },
    });
  });
});

describe('append refuses what can never be placed', () => {
  const cases: Array<[string, unknown[], string, string]> = [
    [
      'a result before its call',
      [
        { role: 'user', content: [result('toolu_x', 'early')] },
        { role: 'assistant', content: [use('toolu_x', 'x')] },
      ],
      'messages.0.content.0.tool_use_id',
      'toolu_x',
    ],
    [
      'a second result for one call',
      [
        { role: 'assistant', content: [use('toolu_y', 'y')] },
        { role: 'user', content: [result('toolu_y', '1')] },
        { role: 'user', content: [result('toolu_y', '2')] },
      ],
      'messages.2.content.0.tool_use_id',
      'toolu_y',
    ],
    [
      'a reused call id',
      [
        { role: 'assistant', content: [use('toolu_z', 'z')] },
        { role: 'user', content: [result('toolu_z', '1')] },
        { role: 'assistant', content: [use('toolu_z', 'z')] },
      ],
      'messages.2.content.0.id',
      'toolu_z',
    ],
  ];
  it.each(cases)('%s', async (name, messages, field, callId) => {
    const id = `refuse-${name.replaceAll(' ', '-')}`;
    await create(id);
    const res = await append(id, messages);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    const problem = res.json();
    expect(problem.errors).toEqual([{ field, message: expect.stringContaining(callId) }]);
  });
});

// The context is read in one statement that finds the conversation and its messages together:
// no conversation is a 404 naming it, a conversation without messages an empty context.
describe('GET /context of a conversation that holds nothing, or is not the caller’s', () => {
  const read = (id: string, key?: string, format = 'anthropic') =>
    t.app.inject({ method: 'GET', url: `/v1/conversations/${id}/context?format=${format}`, headers: t.auth(key) });

  it('an empty conversation has an empty context in every format', async () => {
    await create('ctx-empty');
    const anthropic = await read('ctx-empty');
    expect(anthropic.statusCode).toBe(200);
    expect(anthropic.json().messages).toEqual([]);
    expect((await read('ctx-empty', undefined, 'openai')).json().messages).toEqual([]);
  });

  it('an unknown conversation, or another tenant’s, is 404 naming the conversation', async () => {
    await create('ctx-mine');
    expect((await append('ctx-mine', [{ role: 'user', content: 'mine only' }])).statusCode).toBe(201);
    for (const res of [await read('ctx-nowhere'), await read('ctx-mine', t.otherKey)]) {
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.json().code).toBe('CONVERSATION_NOT_FOUND');
    }
    const own = (await read('ctx-mine')).json();
    expect(JSON.stringify(own.messages)).toContain('mine only');
  });
});
