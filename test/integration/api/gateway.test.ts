import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { waitFor } from '../../../harness/wait-for.js';
import { activeMessages, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * The gateway (SPEC §6.3) driven by the official SDKs, unmodified but for their base URL,
 * over the whole service (real Postgres, Redis and workers), forwarding to llm-sim.
 */

let sim: TestLlmSim;
let stack: Stack;
let base: string;

beforeAll(async () => {
  sim = await startTestLlmSim({ keepBodies: 1000 });
  stack = await createStack({
    env: {
      ANTHROPIC_BASE_URL: sim.url,
      ANTHROPIC_API_KEY: 'sk-ant-configured',
      OPENAI_BASE_URL: sim.openaiBaseUrl,
      OPENAI_API_KEY: 'sk-openai-configured',
      // summaries by the local summarizer: llm-sim's call log holds the agents' calls only
      COMPACTD_SUMMARIZER: 'local',
    },
  });
  base = await stack.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
});
beforeEach(() => {
  sim.control.reset();
});

const anthropic = (headers: Record<string, string> = {}) =>
  new Anthropic({ apiKey: stack.key, baseURL: `${base}/gateway/anthropic`, defaultHeaders: headers, maxRetries: 0 });
const openai = (headers: Record<string, string> = {}) =>
  new OpenAI({ apiKey: stack.key, baseURL: `${base}/gateway/openai/v1`, defaultHeaders: headers, maxRetries: 0 });

type Body = { system?: unknown; messages: Array<{ role: string; content: unknown }>; tools?: unknown };
const upstreamBodies = () => sim.control.callLog().map((call) => call.body as Body);
const textOf = (content: unknown) => JSON.stringify(content);

const tools = [
  {
    name: 'run_tests',
    description: 'Runs a test file',
    input_schema: { type: 'object' as const, properties: { file: { type: 'string' } }, required: ['file'] },
  },
];

describe('Anthropic SDK through the gateway', () => {
  it('answers a non-streamed call, stores both turns, and names the conversation', async () => {
    const client = anthropic({ 'x-compactd-conversation': 'a-plain' });
    const { data, response } = await client.messages
      .create({
        model: 'claude-haiku-4-5',
        max_tokens: 200,
        system: 'You fix tests.',
        messages: [{ role: 'user', content: 'Why does src/lru.test.ts fail?' }],
      })
      .withResponse();
    expect(data.content[0]?.type).toBe('text');
    expect(data.usage.input_tokens).toBeGreaterThan(0);
    expect(response.headers.get('x-compactd-gateway')).toBe('compacted');
    expect(response.headers.get('x-compactd-conversation')).toBe('a-plain');
    // the provider got compactd's configured key, never the compactd key
    const stored = await waitForMessages('a-plain', 2);
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(upstreamBodies()[0]?.system).toBe('You fix tests.');
  });

  it('streams (SSE relayed as it comes), and a follow-up turn stores only what is new', async () => {
    const client = anthropic({ 'x-compactd-conversation': 'a-stream' });
    const history: Anthropic.MessageParam[] = [{ role: 'user', content: 'List the failing tests in src/cache.' }];
    const events: string[] = [];
    const stream = client.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 200, tools, messages: history });
    stream.on('streamEvent', (event) => events.push(event.type));
    const first = await stream.finalMessage();
    expect(events[0]).toBe('message_start');
    expect(events.at(-1)).toBe('message_stop');
    expect(first.content.length).toBeGreaterThan(0);
    history.push({ role: 'assistant', content: first.content }, { role: 'user', content: 'Now fix the first one.' });
    const second = await client.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 200, tools, messages: history }).finalMessage();
    expect(second.stop_reason).toBeTruthy();
    const stored = await waitForMessages('a-stream', 4);
    expect(stored).toHaveLength(4);
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    // the second upstream request repeats the first byte for byte, then adds the new turns
    const [b1, b2] = upstreamBodies();
    expect(JSON.stringify({ ...b2, messages: b2!.messages.slice(0, b1!.messages.length) })).toBe(JSON.stringify(b1));
    expect(b2!.messages).toHaveLength(3);
  });

  it('relays the stream as the provider writes it, not once it is complete', async () => {
    sim.control.setProfile('haiku');
    try {
      const stream = anthropic({ 'x-compactd-conversation': 'a-pace' }).messages.stream({
        model: 'claude-haiku-4-5',
        max_tokens: 60,
        messages: [{ role: 'user', content: 'Explain the eviction bug in detail.' }],
      });
      const deltas: number[] = [];
      stream.on('text', () => deltas.push(performance.now()));
      await stream.finalMessage();
      expect(deltas.length).toBeGreaterThan(3);
      // ~70 tokens/s upstream: the deltas reach the client spread over the answer's time
      expect(deltas.at(-1)! - deltas[0]!).toBeGreaterThan(200);
    } finally {
      sim.control.setProfile('instant');
    }
  });

  it('carries tool calls and their results round trip', async () => {
    const client = anthropic({ 'x-compactd-conversation': 'a-tools' });
    const messages: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Run src/lru.test.ts' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'run_tests', input: { file: 'src/lru.test.ts' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'not ok 3 expected 3 to be 2 at lru.ts:88' }] },
    ];
    const answer = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 200, tools, messages });
    expect(answer.role).toBe('assistant');
    const sent = upstreamBodies()[0]!;
    expect(sent.messages).toEqual(messages);
    expect(sent.tools).toEqual(tools);
    const stored = await waitForMessages('a-tools', 4);
    expect(stored[1]?.content[0]).toMatchObject({ type: 'tool_use', id: 'toolu_01', name: 'run_tests' });
    expect(stored[2]?.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_01' });
  });

  it('passes upstream errors through with their status and shape', async () => {
    sim.control.setFaults({ script: ['overloaded'] });
    const error = await anthropic({ 'x-compactd-conversation': 'a-errors' })
      .messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hello' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect((error as { error: { error: { type: string } } }).error.error.type).toBe('overloaded_error');
    // an invalid request is the provider's 400, as the provider words it
    sim.control.setFaults({});
    const invalid = await anthropic({ 'x-compactd-conversation': 'a-errors-2' })
      .messages.create({
        model: 'claude-haiku-4-5',
        max_tokens: 50,
        messages: [
          { role: 'assistant', content: 'I start' },
          { role: 'assistant', content: 'twice' },
        ],
      })
      .catch((e: unknown) => e);
    expect((invalid as InstanceType<typeof Anthropic.APIError>).status).toBe(400);
  });

  it('refuses a wrong compactd key in the provider error shape', async () => {
    const client = new Anthropic({ apiKey: 'cmp_wrong', baseURL: `${base}/gateway/anthropic`, maxRetries: 0 });
    const error = await client.messages
      .create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(sim.control.callLog()).toHaveLength(0);
  });

  it('names a malformed body field', async () => {
    const res = await fetch(`${base}/gateway/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': stack.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 5, messages: 'hello' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', field: 'body.messages' } });
  });
});

describe('conversation identity', () => {
  const ask = (client: Anthropic, body: Partial<Anthropic.MessageCreateParamsNonStreaming>) =>
    client.messages
      .create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], ...body })
      .withResponse();

  it('takes the header first, then metadata.user_id, then a hash of the system prompt and first user message', async () => {
    const byHeader = await ask(anthropic({ 'x-compactd-conversation': 'named' }), { metadata: { user_id: 'someone' } });
    expect(byHeader.response.headers.get('x-compactd-conversation')).toBe('named');
    const byUser = await ask(anthropic(), { metadata: { user_id: 'agent-7' } });
    expect(byUser.response.headers.get('x-compactd-conversation')).toBe('agent-7');
    const json = await ask(anthropic(), { metadata: { user_id: '{"session_id":"abc"}' } });
    expect(json.response.headers.get('x-compactd-conversation')).toMatch(/^user-[0-9a-f]{32}$/);
    const hashed1 = await ask(anthropic(), { system: 'You are agent A.' });
    const hashed2 = await ask(anthropic(), { system: 'You are agent A.' });
    const other = await ask(anthropic(), { system: 'You are agent B.' });
    const id = hashed1.response.headers.get('x-compactd-conversation');
    expect(id).toMatch(/^h-[0-9a-f]{32}$/);
    expect(hashed2.response.headers.get('x-compactd-conversation')).toBe(id);
    expect(other.response.headers.get('x-compactd-conversation')).not.toBe(id);
  });

  it('stores a history that shares not even its first message as a thread of its own, and keeps the stored one intact', async () => {
    const a = await ask(anthropic({ 'x-compactd-conversation': 'shared' }), { messages: [{ role: 'user', content: 'task one' }] });
    expect(a.response.headers.get('x-compactd-gateway')).toBe('compacted');
    await waitForMessages('shared', 2);
    const b = await ask(anthropic({ 'x-compactd-conversation': 'shared' }), { messages: [{ role: 'user', content: 'a different task' }] });
    expect(b.response.headers.get('x-compactd-gateway')).toBe('compacted');
    const thread = b.response.headers.get('x-compactd-conversation');
    expect(thread).toMatch(/^shared\.t-[0-9a-f]{16}$/);
    expect(upstreamBodies()[1]?.messages).toEqual([{ role: 'user', content: 'a different task' }]);
    const stored = await activeMessages(stack, 'shared');
    expect(stored).toHaveLength(2);
    expect(textOf(stored[0]?.content)).toContain('task one');
    expect(textOf((await waitForMessages(thread!, 2))[0]?.content)).toContain('a different task');
    // the first history goes on under its own id
    const answer = {
      role: 'assistant' as const,
      content: a.data.content.map((block) => ({ type: 'text' as const, text: block.type === 'text' ? block.text : '' })),
    };
    const c = await ask(anthropic({ 'x-compactd-conversation': 'shared' }), {
      messages: [{ role: 'user', content: 'task one' }, answer, { role: 'user', content: 'go on' }],
    });
    expect(c.response.headers.get('x-compactd-conversation')).toBe('shared');
    expect(await waitForMessages('shared', 4)).toHaveLength(4);
  });

  it('stores two different first requests that race for an empty id, one under the id and one as its thread', async () => {
    const client = anthropic({ 'x-compactd-conversation': 'raced' });
    const answers = await Promise.all(
      ['first history', 'second history', 'third history'].map((text) => ask(client, { messages: [{ role: 'user', content: text }] })),
    );
    expect(answers.map((a) => a.response.headers.get('x-compactd-gateway'))).toEqual(['compacted', 'compacted', 'compacted']);
    const ids = answers.map((a) => a.response.headers.get('x-compactd-conversation')!);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(await waitForMessages(id, 2)).toHaveLength(2);
  });

  it("follows an edited earlier turn: the stored turns after it are archived as rewound, the client's appended", async () => {
    const client = anthropic({ 'x-compactd-conversation': 'edited' });
    const first = await ask(client, { messages: [{ role: 'user', content: 'run the tests' }] });
    await waitForMessages('edited', 2);
    const answer = {
      role: 'assistant' as const,
      content: first.data.content.map((block) => ({ type: 'text' as const, text: block.type === 'text' ? block.text : '' })),
    };
    const next = await ask(client, {
      messages: [{ role: 'user', content: 'run the tests' }, answer, { role: 'user', content: 'and the linter' }],
    });
    expect(next.response.headers.get('x-compactd-gateway')).toBe('compacted');
    await waitForMessages('edited', 4);
    // the same history with its third turn edited
    const edited = await ask(client, {
      messages: [{ role: 'user', content: 'run the tests' }, answer, { role: 'user', content: 'and the benchmarks' }],
    });
    expect(edited.response.headers.get('x-compactd-gateway')).toBe('compacted');
    expect(textOf(upstreamBodies()[2]?.messages[2]?.content)).toContain('and the benchmarks');
    const stored = await waitForMessages('edited', 4);
    await waitFor(async () => textOf((await activeMessages(stack, 'edited'))[2]?.content).includes('benchmarks'));
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    // nothing lost: the turns the client no longer sends are in the export, archived as rewound
    const exported = await stack.app.inject({ method: 'GET', url: '/v1/conversations/edited/export', headers: stack.auth() });
    expect(exported.body).toContain('and the linter');
    expect(exported.body).toContain('rewound');
  });

  it('rejects an invalid conversation header, naming it', async () => {
    const error = await ask(anthropic({ 'x-compactd-conversation': 'no spaces/allowed' }), {}).catch((e: unknown) => e);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(400);
    expect(JSON.stringify((error as { error: unknown }).error)).toContain('headers.x-compactd-conversation');
  });
});

describe('OpenAI SDK through the gateway', () => {
  it('answers streamed and non-streamed calls, with tool calls round trip and `user` as the conversation', async () => {
    const client = openai();
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You fix tests.' },
      { role: 'user', content: 'Run src/lru.test.ts' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'run_tests', arguments: '{"file":"src/lru.test.ts"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'not ok 3 expected 3 to be 2' },
    ];
    const { data, response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, user: 'oa-agent' }).withResponse();
    expect(response.headers.get('x-compactd-conversation')).toBe('oa-agent');
    expect(data.choices[0]?.message.role).toBe('assistant');
    messages.push(data.choices[0]!.message, { role: 'user', content: 'Fix it.' });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages,
      user: 'oa-agent',
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(usage?.prompt_tokens).toBeGreaterThan(0);
    // system prompt first and untouched; history as sent; nothing stored twice
    const [b1, b2] = upstreamBodies();
    expect(b1?.messages).toEqual(messages.slice(0, 4));
    expect(JSON.stringify(b2!.messages.slice(0, b1!.messages.length))).toBe(JSON.stringify(b1!.messages));
    const stored = await waitForMessages('oa-agent', 6);
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant']);
  });

  it('passes a rate limit through with its status and retry-after', async () => {
    sim.control.setFaults({ script: ['rate_limit'], retryAfterMs: 2000 });
    const error = await openai()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], user: 'oa-429' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('2');
  });

  it('lists models through the gateway, for both SDKs', async () => {
    const openaiModels = [];
    for await (const model of openai().models.list()) openaiModels.push(model.id);
    expect(openaiModels).toContain('gpt-4o-mini');
    const anthropicModels = [];
    for await (const model of anthropic().models.list()) anthropicModels.push(model.id);
    expect(anthropicModels).toContain('claude-haiku-4-5');
    const traversal = await fetch(`${base}/gateway/anthropic/v1/models/..%2F..%2Fadmin`, { headers: { 'x-api-key': stack.key } });
    expect(traversal.status).toBe(400);
    expect(await traversal.json()).toMatchObject({ error: { field: 'params.model' } });
  });
});

describe('compaction through the gateway', () => {
  it('sends the clip-archive in place of the archived prefix, and the same prefix on the next request', async () => {
    const id = 'a-compacts';
    await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: { id, contextLimit: 200_000, policy: { keepRecent: 4, minMessages: 8 } },
    });
    const client = anthropic({ 'x-compactd-conversation': id });
    const history: Anthropic.MessageParam[] = [];
    for (let i = 0; i < 8; i += 1) {
      history.push({
        role: 'user',
        content: `Step ${i}: make src/feature${i}.test.ts pass. ${'The log says: expected 3 to equal 4 at src/feature.ts:12. '.repeat(40)}`,
      });
      const answer = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, messages: history });
      history.push({ role: 'assistant', content: answer.content });
    }
    await waitForMessages(id, 16);
    const job = (
      await stack.app.inject({ method: 'POST', url: `/v1/conversations/${id}/compactions`, headers: stack.auth(), payload: {} })
    ).json();
    expect((await waitForJob(stack, job.id)).status).toBe('completed');
    sim.control.reset();
    history.push({ role: 'user', content: 'What is left?' });
    const answer = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, messages: history });
    history.push({ role: 'assistant', content: answer.content }, { role: 'user', content: 'Thanks. Anything else?' });
    await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, messages: history });
    // count_tokens counts what the gateway sends: the compacted context, not the whole history,
    // also once the answer the client has not sent back yet is stored
    await waitFor(async () => (await activeMessages(stack, id)).at(-1)?.role === 'assistant');
    const counted = await client.messages.countTokens({ model: 'claude-haiku-4-5', messages: history });
    const straight = await new Anthropic({ apiKey: 'sk', baseURL: sim.url }).messages.countTokens({
      model: 'claude-haiku-4-5',
      messages: history,
    });
    expect(counted.input_tokens).toBeLessThan(straight.input_tokens);
    const [b1, b2] = upstreamBodies();
    expect(textOf(b1?.system)).toContain('compactd');
    expect(b1!.messages.length).toBeLessThan(history.length - 2);
    expect(JSON.stringify({ ...b2, messages: b2!.messages.slice(0, b1!.messages.length) })).toBe(JSON.stringify(b1));
  });

  it('makes a request that does not fit the window wait for its compaction, then sends the compacted context', async () => {
    const id = 'a-waits';
    await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: { id, contextLimit: 4_000, policy: { keepRecent: 2, minMessages: 4 } },
    });
    const history: Anthropic.MessageParam[] = [];
    for (let i = 0; i < 6; i += 1) {
      history.push(
        { role: 'user', content: `Part ${i}. ${'A build log line with an error in src/module.ts. '.repeat(60)}` },
        { role: 'assistant', content: `Noted part ${i}.` },
      );
    }
    history.push({ role: 'user', content: 'What failed?' });
    const { data, response } = await anthropic({ 'x-compactd-conversation': id })
      .messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: history })
      .withResponse();
    expect(data.content.length).toBeGreaterThan(0);
    expect(response.headers.get('x-compactd-gateway')).toBe('compacted');
    const calls = sim.control.callLog();
    expect(calls).toHaveLength(1);
    const sent = calls[0]!.body as Body;
    expect(textOf(sent.system)).toContain('<compactd');
    expect(sent.messages.length).toBeLessThan(history.length);
    const jobs = (await stack.app.inject({ method: 'GET', url: `/v1/conversations/${id}/jobs`, headers: stack.auth() })).json() as {
      jobs: Array<{ status: string; finishedAt: string }>;
    };
    expect(jobs.jobs[0]?.status).toBe('completed');
    expect(Date.parse(jobs.jobs[0]!.finishedAt)).toBeLessThanOrEqual(calls[0]!.startMs);
  });

  it('answers a provider context overflow by compacting and retrying once', async () => {
    const id = 'a-overflow';
    await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: { id, contextLimit: 200_000, policy: { keepRecent: 2, minMessages: 4 } },
    });
    const client = anthropic({ 'x-compactd-conversation': id });
    const history: Anthropic.MessageParam[] = [];
    for (let i = 0; i < 6; i += 1) {
      history.push({ role: 'user', content: `Part ${i}. ${'Long build log line with an error in src/module.ts. '.repeat(120)}` });
      const answer = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: history });
      history.push({ role: 'assistant', content: answer.content });
    }
    await waitForMessages(id, 12);
    const sizes = sim.control.callLog().map((c) => c.inputTokens);
    // the provider's window is now below the whole history
    sim.control.configure({ summarizeWindow: Math.floor((sizes.at(-1) ?? 0) * 0.8) });
    sim.control.reset();
    history.push({ role: 'user', content: 'Summarize the errors.' });
    const answer = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: history }).catch((e: unknown) => e);
    const calls = sim.control.callLog();
    const jobs = (await stack.app.inject({ method: 'GET', url: `/v1/conversations/${id}/jobs`, headers: stack.auth() })).json();
    expect(
      calls.map((c) => c.status),
      JSON.stringify(jobs),
    ).toEqual([400, 200]);
    expect(calls[1]!.inputTokens).toBeLessThan(calls[0]!.inputTokens);
    expect((answer as Anthropic.Message).content.length).toBeGreaterThan(0);
    sim.control.configure({ summarizeWindow: null });
  });
});

/** The conversation's active messages once at least `count` are stored (the answer is stored after the response). */
async function waitForMessages(id: string, count: number) {
  let messages = await activeMessages(stack, id);
  await waitFor(async () => (messages = await activeMessages(stack, id)).length >= count, 10_000, 50, `${count} messages stored in ${id}`);
  return messages;
}
