import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { waitFor } from '../../../harness/wait-for.js';
import { activeMessages, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * What real clients do to a history, through the gateway with the official SDKs: a retry of an
 * answered request, an edited earlier turn, a NUL byte in a tool output, `''` re-sent for a
 * `null` content, a side request under the same end-user id. After each, the conversation
 * goes on being stored and compacted: once past its trigger it compacts, and the next request
 * upstream is at most half the largest before it.
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
      COMPACTD_SUMMARIZER: 'local',
    },
  });
  base = await stack.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
});
beforeEach(() => sim.control.reset());

const anthropic = () => new Anthropic({ apiKey: stack.key, baseURL: `${base}/gateway/anthropic`, maxRetries: 0 });
const openai = () => new OpenAI({ apiKey: stack.key, baseURL: `${base}/gateway/openai/v1`, maxRetries: 0 });

/** A window the session passes after a few turns; compacted down to a fifth of it. */
async function createConversation(id: string): Promise<void> {
  const created = await stack.app.inject({
    method: 'POST',
    url: '/v1/conversations',
    headers: stack.auth(),
    payload: {
      id,
      model: 'claude-haiku-4-5',
      contextLimit: 6_000,
      policy: { triggerRatio: 0.6, warnRatio: 0.5, targetRatio: 0.2, keepRecent: 2, minMessages: 6, cooldownMessages: 2 },
    },
  });
  expect(created.statusCode).toBe(201);
}

const step = (i: number) =>
  `Step ${i}: the build log of src/module${i}.ts. ${'error TS2345 at src/module.ts:12, expected string got number. '.repeat(40)}`;

interface Jobs {
  jobs: Array<{ id: string; status: string; trigger: string }>;
}
const jobsOf = async (id: string) =>
  ((await stack.app.inject({ method: 'GET', url: `/v1/conversations/${id}/jobs`, headers: stack.auth() })).json() as Jobs).jobs;

/** Waits for the conversation's compactions in flight (they run in the background after an append). */
async function settle(id: string): Promise<void> {
  for (const job of await jobsOf(id))
    if (!['completed', 'failed', 'cancelled', 'noop'].includes(job.status)) await waitForJob(stack, job.id);
}

/** Upstream input tokens of the agent's calls to `id`'s conversation, in order. */
const inputTokens = () => sim.control.callLog().map((call) => call.inputTokens);

/**
 * Drives turns of an Anthropic agent under `x-compactd-conversation: id` until a compaction
 * completed after `since` jobs, and returns the input tokens of the first request after it
 * with the largest before it.
 */
async function turnsUntilCompacted(
  id: string,
  history: Anthropic.MessageParam[],
  since: number,
  from: number,
): Promise<{ largest: number; after: number }> {
  const client = anthropic();
  for (let i = from; i < from + 30; i += 1) {
    history.push({ role: 'user', content: step(i) });
    const answer = await client.messages.create(
      { model: 'claude-haiku-4-5', max_tokens: 60, messages: history },
      { headers: { 'x-compactd-conversation': id } },
    );
    history.push({ role: 'assistant', content: answer.content });
    await waitFor(async () => (await activeMessages(stack, id)).at(-1)?.role === 'assistant');
    await settle(id);
    const done = (await jobsOf(id)).filter((job) => job.status === 'completed');
    if (done.length > since) {
      const before = inputTokens();
      history.push({ role: 'user', content: 'What is left?' });
      await client.messages.create(
        { model: 'claude-haiku-4-5', max_tokens: 60, messages: history },
        { headers: { 'x-compactd-conversation': id } },
      );
      const all = inputTokens();
      return { largest: Math.max(...before), after: all.at(-1)! };
    }
  }
  throw new Error(`${id}: no compaction after 30 turns`);
}

const textBlocks = (content: Anthropic.ContentBlock[]) =>
  content.map((block) => ({ type: 'text' as const, text: block.type === 'text' ? block.text : '' }));

describe('a history that diverges once heals', () => {
  it('after an edited earlier turn, the conversation compacts again and the next request is at most half the largest', async () => {
    const id = 'heal-edit';
    await createConversation(id);
    const client = anthropic();
    const history: Anthropic.MessageParam[] = [];
    for (let i = 0; i < 2; i += 1) {
      history.push({ role: 'user', content: step(i) });
      const answer = await client.messages.create(
        { model: 'claude-haiku-4-5', max_tokens: 60, messages: history },
        { headers: { 'x-compactd-conversation': id } },
      );
      history.push({ role: 'assistant', content: textBlocks(answer.content) });
    }
    history[2] = { role: 'user', content: `Edited: ${step(1)}` };
    const edited = await client.messages
      .create({ model: 'claude-haiku-4-5', max_tokens: 60, messages: history.slice(0, 3) }, { headers: { 'x-compactd-conversation': id } })
      .withResponse();
    expect(edited.response.headers.get('x-compactd-gateway')).toBe('compacted');
    history.splice(3, history.length, { role: 'assistant', content: textBlocks(edited.data.content) });
    const { largest, after } = await turnsUntilCompacted(id, history, 0, 2);
    expect(after).toBeLessThanOrEqual(largest * 0.5);
  });

  it('after a retry of an answered request, the stored answer is rewound and the conversation compacts again', async () => {
    const id = 'heal-retry';
    await createConversation(id);
    const client = anthropic();
    const history: Anthropic.MessageParam[] = [{ role: 'user', content: step(0) }];
    await client.messages.create(
      { model: 'claude-haiku-4-5', max_tokens: 60, messages: history },
      { headers: { 'x-compactd-conversation': id } },
    );
    await waitFor(async () => (await activeMessages(stack, id)).length === 2);
    // the client did not get the answer (a timeout) and sends the same request again
    const retried = await client.messages
      .create({ model: 'claude-haiku-4-5', max_tokens: 60, messages: history }, { headers: { 'x-compactd-conversation': id } })
      .withResponse();
    expect(retried.response.headers.get('x-compactd-gateway')).toBe('compacted');
    history.push({ role: 'assistant', content: textBlocks(retried.data.content) });
    await waitFor(async () => (await activeMessages(stack, id)).length === 2);
    const { largest, after } = await turnsUntilCompacted(id, history, 0, 1);
    expect(after).toBeLessThanOrEqual(largest * 0.5);
  });

  it('after a NUL and a lone surrogate in a tool output, the output is stored marked and the conversation compacts again', async () => {
    const id = 'heal-nul';
    await createConversation(id);
    const tools = [
      {
        name: 'Bash',
        description: 'Runs a command',
        input_schema: { type: 'object' as const, properties: { command: { type: 'string' } } },
      },
    ];
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: step(0) },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_cat', name: 'Bash', input: { command: 'cat build/app.bin' } }] },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_cat', content: 'ELF\u0000\u0001\u0002 header \ud800 garbage' }],
      },
    ];
    const sent = await anthropic()
      .messages.create(
        { model: 'claude-haiku-4-5', max_tokens: 60, tools, messages: history },
        { headers: { 'x-compactd-conversation': id } },
      )
      .withResponse();
    expect(sent.response.headers.get('x-compactd-gateway')).toBe('compacted');
    history.push({ role: 'assistant', content: textBlocks(sent.data.content) });
    const stored = await activeMessages(stack, id);
    expect(stored[2]?.content[0]).toMatchObject({ type: 'tool_result', content: 'ELF\u2400\u0001\u0002 header \ufffd garbage' });
    // the provider got the client's own bytes
    expect(JSON.stringify(sim.control.callLog()[0]?.body)).toContain('ELF\\u0000');
    const { largest, after } = await turnsUntilCompacted(id, history, 0, 1);
    expect(after).toBeLessThanOrEqual(largest * 0.5);
  });

  it("stores an OpenAI tool-call-only answer once, whether the client re-sends its content as null or ''", async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Run the tests.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'run', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'ok 12 tests' },
    ];
    const first = await openai().chat.completions.create({ model: 'gpt-4o-mini', messages, user: 'heal-empty' }).withResponse();
    expect(first.response.headers.get('x-compactd-gateway')).toBe('compacted');
    messages.push(first.data.choices[0]!.message, { role: 'user', content: 'Next.' });
    messages[1] = { ...(messages[1] as OpenAI.ChatCompletionAssistantMessageParam), content: '' };
    const second = await openai().chat.completions.create({ model: 'gpt-4o-mini', messages, user: 'heal-empty' }).withResponse();
    expect(second.response.headers.get('x-compactd-gateway')).toBe('compacted');
    const stored = await waitFor(async () => (await activeMessages(stack, 'heal-empty')).length === 6).then(() =>
      activeMessages(stack, 'heal-empty'),
    );
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant']);
  });

  it("a side request with the same end-user id, sent first, does not take the main history's place", async () => {
    const user = 'heal-side-user';
    const client = anthropic();
    const title = (text: string) =>
      client.messages
        .create({
          model: 'claude-haiku-4-5',
          max_tokens: 20,
          system: 'Write a 5-word title.',
          metadata: { user_id: user },
          messages: [{ role: 'user', content: text }],
        })
        .withResponse();
    const mainTurn = (messages: Anthropic.MessageParam[]) =>
      client.messages
        .create({ model: 'claude-haiku-4-5', max_tokens: 60, system: 'You are the main agent.', metadata: { user_id: user }, messages })
        .withResponse();
    // Claude Code run interactively: a title request first, then the main loop, and a title request every turn
    expect((await title('Fix the build of src/module.ts')).response.headers.get('x-compactd-conversation')).toBe(user);
    const history: Anthropic.MessageParam[] = [{ role: 'user', content: step(0) }];
    const first = await mainTurn(history);
    expect(first.response.headers.get('x-compactd-gateway')).toBe('compacted');
    const main = first.response.headers.get('x-compactd-conversation')!;
    expect(main).toMatch(new RegExp(`^${user}\\.t-`));
    history.push({ role: 'assistant', content: textBlocks(first.data.content) }, { role: 'user', content: step(1) });
    expect((await title('Now the tests')).response.headers.get('x-compactd-conversation')).not.toBe(main);
    const second = await mainTurn(history);
    expect(second.response.headers.get('x-compactd-conversation')).toBe(main);
    expect(second.response.headers.get('x-compactd-gateway')).toBe('compacted');
    await waitFor(async () => (await activeMessages(stack, main)).length === 4);
    // the main history is stored whole; the first title request keeps its own two turns
    expect((await activeMessages(stack, main)).map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(await activeMessages(stack, user)).toHaveLength(2);
    // the session's threads are linked to the conversation they branch from
    const children = (
      await stack.app.inject({ method: 'GET', url: `/v1/conversations?parentId=${user}`, headers: stack.auth() })
    ).json() as { conversations: Array<{ id: string; createdBy: string }> };
    expect(children.conversations.map((c) => c.id)).toContain(main);
    expect(children.conversations.every((c) => c.createdBy === 'gateway')).toBe(true);
  });
});

describe('the SDKs with their retries on', () => {
  it('a request the SDK retries after an overload and a rate limit is stored once, and the conversation goes on', async () => {
    const id = 'sdk-retries';
    const anthropicClient = new Anthropic({ apiKey: stack.key, baseURL: `${base}/gateway/anthropic`, maxRetries: 3 });
    sim.control.setFaults({ script: ['overloaded', 'rate_limit'], retryAfterMs: 10 });
    const history: Anthropic.MessageParam[] = [{ role: 'user', content: step(0) }];
    const answer = await anthropicClient.messages.create(
      { model: 'claude-haiku-4-5', max_tokens: 40, messages: history },
      { headers: { 'x-compactd-conversation': id } },
    );
    sim.control.setFaults({});
    expect(sim.control.callLog().map((call) => call.status)).toEqual([529, 429, 200]);
    history.push({ role: 'assistant', content: textBlocks(answer.content) }, { role: 'user', content: step(1) });
    await anthropicClient.messages.create(
      { model: 'claude-haiku-4-5', max_tokens: 40, messages: history },
      { headers: { 'x-compactd-conversation': id } },
    );
    const stored = await waitFor(async () => (await activeMessages(stack, id)).length === 4).then(() => activeMessages(stack, id));
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);

    const openaiClient = new OpenAI({ apiKey: stack.key, baseURL: `${base}/gateway/openai/v1`, maxRetries: 3 });
    sim.control.setFaults({ script: ['rate_limit'], retryAfterMs: 10 });
    await openaiClient.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Run the tests.' }],
      user: 'sdk-retries-oa',
    });
    sim.control.setFaults({});
    expect(
      (
        await waitFor(async () => (await activeMessages(stack, 'sdk-retries-oa')).length === 2).then(() =>
          activeMessages(stack, 'sdk-retries-oa'),
        )
      ).map((m) => m.role),
    ).toEqual(['user', 'assistant']);
  });
});

describe('what compactd cannot store as sent', () => {
  it('stores a message over the size limit clipped in the middle, marked, and keeps storing what follows', async () => {
    const id = 'stand-ins';
    const tools = [
      {
        name: 'Bash',
        description: 'Runs a command',
        input_schema: { type: 'object' as const, properties: { command: { type: 'string' } } },
      },
    ];
    const huge = `first lines of the log\n${'0123456789abcdef'.repeat(200_000)}\nlast line: exit 1`;
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Build it.' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_0', name: 'Bash', input: { command: 'make' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_0', content: huge }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'Bash', input: { command: 'make test' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'ok' }] },
    ];
    const sent = await anthropic()
      .messages.create(
        { model: 'claude-haiku-4-5', max_tokens: 20, tools, messages: history },
        { headers: { 'x-compactd-conversation': id } },
      )
      .withResponse();
    expect(sent.response.headers.get('x-compactd-gateway')).toBe('compacted');
    const stored = await waitFor(async () => (await activeMessages(stack, id)).length === 6).then(() => activeMessages(stack, id));
    const clipped = JSON.stringify(stored[2]?.content);
    expect(clipped).toContain('first lines of the log');
    expect(clipped).toContain('last line: exit 1');
    expect(clipped).toMatch(/clipped by compactd: \d+ of \d+ characters/);
    expect(clipped.length).toBeLessThan(huge.length);
    expect(JSON.stringify(stored[3]?.content)).toContain('make test');
    // the provider got the client's own messages
    expect(JSON.stringify(sim.control.callLog()[0]?.body)).toContain('make test');
  });
});

describe('gateway compactions obey the quotas and the policy', () => {
  it('a conversation with auto compaction off goes upstream as it is, with no job', async () => {
    const id = 'policy-off';
    const created = await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: { id, contextLimit: 4_000, policy: { auto: false, minMessages: 2 } },
    });
    expect(created.statusCode).toBe(201);
    const messages: Anthropic.MessageParam[] = [
      { role: 'user', content: step(0).repeat(4) },
      { role: 'assistant', content: 'Noted.' },
      { role: 'user', content: step(1).repeat(4) },
    ];
    const sent = await anthropic()
      .messages.create({ model: 'claude-haiku-4-5', max_tokens: 20, messages }, { headers: { 'x-compactd-conversation': id } })
      .withResponse();
    expect(sent.response.headers.get('x-compactd-gateway')).toBe('compacted');
    expect(await jobsOf(id)).toEqual([]);
    expect(sim.control.callLog()[0]?.inputTokens).toBeGreaterThan(4_000);
  });
});
