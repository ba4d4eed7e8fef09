import { sql } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { waitFor } from '../../../harness/wait-for.js';
import { activeMessages, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * The gateway's Responses route (`POST /gateway/openai/v1/responses`, docs/gateway.md) driven by
 * the official OpenAI SDK over the whole service (real Postgres, Redis and workers), forwarding
 * to llm-sim, which checks every item it gets as the API would.
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

const openai = (conversation: string) =>
  new OpenAI({
    apiKey: stack.key,
    baseURL: `${base}/gateway/openai/v1`,
    defaultHeaders: { 'x-compactd-conversation': conversation },
    maxRetries: 0,
  });

type Item = Record<string, unknown>;
type ResponsesBody = { input: Item[]; instructions?: string };
const upstream = () =>
  sim.control.callLog().map((call) => ({ endpoint: call.endpoint, status: call.status, body: call.body as ResponsesBody }));

async function waitForMessages(id: string, count: number) {
  let messages: Awaited<ReturnType<typeof activeMessages>> = [];
  await waitFor(async () => (messages = await activeMessages(stack, id)).length >= count, 10_000, 25, `${count} messages in ${id}`);
  return messages;
}

const tools: OpenAI.Responses.Tool[] = [
  {
    type: 'function',
    name: 'exec_command',
    description: 'Runs a shell command',
    strict: false,
    parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
  },
];

describe('the Responses route', () => {
  it('answers a non-streamed call and a streamed one, storing only what is new, and repeats the first input byte for byte', async () => {
    const client = openai('r-plain');
    const input: OpenAI.Responses.ResponseInput = [
      { role: 'developer', content: 'You fix tests.' },
      { role: 'user', content: 'Run src/lru.test.ts' },
      { type: 'function_call', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"npx vitest run src/lru.test.ts"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'not ok 3 expected 3 to be 2 at lru.ts:88' },
    ];
    const { data, response } = await client.responses
      .create({ model: 'gpt-4o-mini', instructions: 'Be brief.', tools, input })
      .withResponse();
    expect(response.headers.get('x-compactd-gateway')).toBe('compacted');
    expect(response.headers.get('x-compactd-conversation')).toBe('r-plain');
    expect(data.output_text.length).toBeGreaterThan(0);

    input.push(...(data.output as OpenAI.Responses.ResponseInputItem[]), { role: 'user', content: 'Fix it.' });
    const stream = client.responses.stream({ model: 'gpt-4o-mini', instructions: 'Be brief.', tools, input });
    const events: string[] = [];
    stream.on('event', (event) => events.push(event.type));
    const second = await stream.finalResponse();
    expect(events[0]).toBe('response.created');
    expect(events.at(-1)).toBe('response.completed');
    expect(second.output_text.length).toBeGreaterThan(0);

    // the developer message is the agent's instructions, not history: user, call, output, answer, user, answer
    const stored = await waitForMessages('r-plain', 6);
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant']);
    expect(stored[1]?.content[0]).toMatchObject({
      type: 'tool_use',
      id: 'call_1',
      name: 'exec_command',
      input: { cmd: 'npx vitest run src/lru.test.ts' },
    });
    expect(stored[2]?.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'call_1' });
    const [b1, b2] = upstream();
    expect(JSON.stringify(b2!.body.input.slice(0, b1!.body.input.length))).toBe(JSON.stringify(b1!.body.input));
    expect(b2!.body.instructions).toBe('Be brief.');
  });

  it('refuses a body without input in the OpenAI error shape, naming the field', async () => {
    const res = await fetch(`${base}/gateway/openai/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', input: 42 }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { param: 'body.input', type: 'invalid_request_error' } });
    expect(sim.control.callLog()).toHaveLength(0);
  });

  it('forwards a request continuing a stored response (previous_response_id) as sent, and stores nothing', async () => {
    const error = await openai('r-previous')
      .responses.create({ model: 'gpt-4o-mini', previous_response_id: 'resp_elsewhere', input: 'And then?' })
      .catch((e: unknown) => e);
    // llm-sim keeps no responses: its own 400, relayed as it is
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.APIError>).headers?.get('x-compactd-gateway')).toBe(
      'passthrough; reason=previous-response-id',
    );
    // the provider's own words: it got the request as sent
    expect((error as Error).message).toContain("Previous response with id 'resp_elsewhere' not found");
    const conversation = await stack.app.inject({ method: 'GET', url: '/v1/conversations/r-previous', headers: stack.auth() });
    expect(conversation.statusCode).toBe(404);
  });
});

describe('compaction through the Responses route', () => {
  it('sends the clip-archive as a developer message in place of the archived turns; the provider accepts it', async () => {
    const id = 'r-compacts';
    await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: { id, contextLimit: 200_000, policy: { keepRecent: 4, minMessages: 8 } },
    });
    const client = openai(id);
    const input: OpenAI.Responses.ResponseInput = [{ role: 'developer', content: 'You fix tests.' }];
    for (let i = 0; i < 8; i += 1) {
      input.push({
        role: 'user',
        content: `Step ${i}: make src/feature${i}.test.ts pass. ${'The log says: expected 3 to equal 4 at src/feature.ts:12. '.repeat(40)}`,
      });
      const answer = await client.responses.create({ model: 'gpt-4o-mini', input });
      input.push(...(answer.output as OpenAI.Responses.ResponseInputItem[]));
    }
    await waitForMessages(id, 16);
    const job = (
      await stack.app.inject({ method: 'POST', url: `/v1/conversations/${id}/compactions`, headers: stack.auth(), payload: {} })
    ).json();
    expect((await waitForJob(stack, job.id)).status).toBe('completed');
    sim.control.reset();
    input.push({ role: 'user', content: 'What is left?' });
    const { response } = await client.responses.create({ model: 'gpt-4o-mini', input }).withResponse();
    expect(response.headers.get('x-compactd-gateway')).toBe('compacted');
    const [sent] = upstream();
    expect(sent?.status).toBe(200);
    const items = sent!.body.input;
    expect(items[0]).toEqual(input[0]);
    expect(items[1]).toMatchObject({ type: 'message', role: 'developer' });
    expect(JSON.stringify(items[1])).toContain('<compactd');
    expect(items.length).toBeLessThan(input.length);
    expect(items.at(-1)).toEqual(input.at(-1));

    // the context route gives the same conversation in the Responses format, which the provider takes
    const context = await stack.app.inject({
      method: 'GET',
      url: `/v1/conversations/${id}/context?format=responses`,
      headers: stack.auth(),
    });
    expect(context.statusCode).toBe(200);
    const contextInput = (context.json() as { input: OpenAI.Responses.ResponseInput }).input;
    expect(contextInput[0]).toMatchObject({ type: 'message', role: 'developer' });
    const direct = new OpenAI({ apiKey: 'sk-test', baseURL: sim.openaiBaseUrl, maxRetries: 0 });
    expect((await direct.responses.create({ model: 'gpt-4o-mini', input: contextInput })).status).toBe('completed');
  });
});

describe('provider compaction passthrough (Responses)', () => {
  it('passes a compaction_trigger through, stores its item as the clip, and extends the history after it', async () => {
    const id = 'r-provider-compaction';
    const client = openai(id);
    const input: OpenAI.Responses.ResponseInput = [{ role: 'developer', content: 'You fix tests.' }];
    for (let i = 0; i < 3; i += 1) {
      input.push({ role: 'user', content: `Step ${i}: fix src/feature${i}.ts` });
      const answer = await client.responses.create({ model: 'gpt-4o-mini', input });
      input.push(...(answer.output as OpenAI.Responses.ResponseInputItem[]));
    }
    await waitForMessages(id, 6);
    sim.control.reset();

    const triggered = await client.responses
      .create({ model: 'gpt-4o-mini', input: [...input, { type: 'compaction_trigger' } as unknown as OpenAI.Responses.ResponseInputItem] })
      .withResponse();
    expect(triggered.response.headers.get('x-compactd-gateway')).toBe('passthrough; reason=provider-compaction');
    // the provider got exactly what the agent sent
    expect(upstream()[0]?.body.input).toHaveLength(input.length + 1);
    const output = triggered.data.output as unknown as Item[];
    const item = output.at(-1)!;
    expect(item['type']).toBe('compaction');

    // the stored history is the provider's item now: what it compacted left the active history
    await waitFor(async () => (await activeMessages(stack, id)).length === 1, 10_000, 25, 'the clip alone');
    const [clip] = await activeMessages(stack, id);
    expect(clip?.role).toBe('assistant');

    // the agent goes on from the compaction's output: its next request opens with the item and extends the stored history
    const next: OpenAI.Responses.ResponseInput = [
      input[0]!,
      ...(output as unknown as OpenAI.Responses.ResponseInputItem[]),
      { role: 'user', content: 'Go on with step 3.' },
    ];
    const answer = await client.responses.create({ model: 'gpt-4o-mini', input: next }).withResponse();
    expect(answer.response.headers.get('x-compactd-gateway')).toBe('compacted');
    const sent = upstream()[1]!;
    expect(sent.status).toBe(200);
    // the item goes back byte-exact, where the agent put it (llm-sim decrypts and checks it)
    expect(JSON.stringify(sent.body.input)).toBe(JSON.stringify(next));
    const stored = await waitForMessages(id, 3);
    expect(stored.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant']);
    expect(JSON.stringify(stored[1]?.content)).toContain('Go on with step 3.');

    // the API's Responses context opens with the item itself, and the provider takes it
    const context = await stack.app.inject({
      method: 'GET',
      url: `/v1/conversations/${id}/context?format=responses`,
      headers: stack.auth(),
    });
    const contextInput = (context.json() as { input: Item[] }).input;
    expect(contextInput[0]).toEqual({ type: 'compaction', encrypted_content: item['encrypted_content'] });
    const direct = new OpenAI({ apiKey: 'sk-test', baseURL: sim.openaiBaseUrl, maxRetries: 0 });
    const accepted = await direct.responses.create({
      model: 'gpt-4o-mini',
      input: contextInput as unknown as OpenAI.Responses.ResponseInput,
    });
    expect(accepted.status).toBe('completed');
  });

  it('forwards /responses/compact as sent; the request carrying its item clips the stored history there', async () => {
    const id = 'r-compact-endpoint';
    const client = openai(id);
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'Fix src/a.ts' }];
    const first = await client.responses.create({ model: 'gpt-4o-mini', input });
    input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]), { role: 'user', content: 'Now src/b.ts' });
    const second = await client.responses.create({ model: 'gpt-4o-mini', input });
    input.push(...(second.output as OpenAI.Responses.ResponseInputItem[]));
    await waitForMessages(id, 4);

    const compacted = await fetch(`${base}/gateway/openai/v1/responses/compact`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json', 'x-compactd-conversation': id },
      body: JSON.stringify({ model: 'gpt-4o-mini', input }),
    });
    expect(compacted.status).toBe(200);
    expect(compacted.headers.get('x-compactd-gateway')).toBe('passthrough; reason=provider-compaction');
    const { output } = (await compacted.json()) as { output: Item[] };
    expect(output.at(-1)?.['type']).toBe('compaction');

    const next = [...output, { role: 'user', content: 'And src/c.ts' }] as unknown as OpenAI.Responses.ResponseInput;
    const answer = await client.responses.create({ model: 'gpt-4o-mini', input: next }).withResponse();
    expect(answer.response.headers.get('x-compactd-gateway')).toBe('compacted');
    expect(upstream().at(-1)?.status).toBe(200);
    // the kept user messages before the item went as sent; the stored history starts at the item
    const stored = await waitForMessages(id, 3);
    expect(stored).toHaveLength(3);
    expect(stored.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant']);
  });
});

describe('provider compaction passthrough (Anthropic on-demand)', () => {
  const BETA = 'compact-2026-09-04';
  const post = (id: string, body: Record<string, unknown>) =>
    fetch(`${base}/gateway/anthropic/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': stack.key,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'anthropic-beta': BETA,
        'x-compactd-conversation': id,
      },
      body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 200, ...body }),
    });

  it('passes `compaction` through, stores the block as the clip, and takes the next request that opens with it', async () => {
    const id = 'a-provider-compaction';
    const messages: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 2; i += 1) {
      messages.push({ role: 'user', content: `Step ${i}: fix src/feature${i}.ts` });
      const answer = (await (await post(id, { messages })).json()) as { content: unknown[] };
      messages.push({ role: 'assistant', content: answer.content });
    }
    await waitForMessages(id, 4);
    messages.push({ role: 'user', content: 'Compact now.' });
    const compacted = await post(id, { messages, compaction: { type: 'summarize' } });
    expect(compacted.status).toBe(200);
    expect(compacted.headers.get('x-compactd-gateway')).toBe('passthrough; reason=provider-compaction');
    const answer = (await compacted.json()) as { stop_reason: string; content: Array<Record<string, unknown>> };
    expect(answer.stop_reason).toBe('compaction');
    expect(answer.content[0]?.['type']).toBe('compaction');

    // the provider's block is the conversation now: the turns it compacted left the active history
    await waitFor(async () => (await activeMessages(stack, id)).length === 1, 10_000, 25, 'the clip alone');
    const next = await post(id, {
      messages: [
        { role: 'assistant', content: answer.content },
        { role: 'user', content: 'Go on.' },
      ],
    });
    expect(next.status, await next.clone().text()).toBe(200);
    expect(next.headers.get('x-compactd-gateway')).toBe('compacted');
    // the block went back byte-exact and first (llm-sim verifies its signature)
    expect(upstream().at(-1)?.status).toBe(200);
    const stored = await waitForMessages(id, 3);
    expect(stored.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant']);
    expect(stored[0]?.content[0]).toMatchObject({ type: 'text', text: answer.content[0]?.['content'] });
    // typed as the provider returned it: the block, the model and the beta header it needs
    const clipRow = await stack.deps.db.execute<{ metadata: Record<string, unknown> }>(
      sql`select m.metadata from messages m join conversations c on c.id = m.conversation_id where c.external_id = ${id} order by m.seq limit 1`,
    );
    expect(clipRow[0]?.metadata['providerCompaction']).toEqual({
      provider: 'anthropic',
      model: 'claude-haiku-4-5',
      beta: BETA,
      item: answer.content[0],
    });
  });

  it('passes threshold mode through: the block at the head of an answer becomes the clip, and the full history sent after it extends it', async () => {
    const id = 'a-threshold';
    const edits = (value: number) => ({
      context_management: { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value } }] },
    });
    const messages: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 2; i += 1) {
      messages.push({ role: 'user', content: `Step ${i}: fix src/feature${i}.ts` });
      const res = await post(id, { messages, ...edits(1_000_000) });
      expect(res.headers.get('x-compactd-gateway')).toBe('passthrough; reason=provider-compaction');
      messages.push({ role: 'assistant', content: ((await res.json()) as { content: unknown[] }).content });
    }
    await waitForMessages(id, 4);
    messages.push({ role: 'user', content: 'Step 2: and src/feature2.ts' });
    const compacted = (await (await post(id, { messages, ...edits(10) })).json()) as { content: Array<Record<string, unknown>> };
    expect(compacted.content[0]).toMatchObject({ type: 'compaction' });
    expect(compacted.content[0]?.['encrypted_content']).toEqual(expect.any(String));
    await waitFor(async () => (await activeMessages(stack, id)).length === 1, 10_000, 25, 'the clip alone');

    // the agent keeps its whole history: the block opens the answer that returned it
    messages.push({ role: 'assistant', content: compacted.content }, { role: 'user', content: 'Go on.' });
    const next = await post(id, { messages, ...edits(1_000_000) });
    expect(next.status, await next.clone().text()).toBe(200);
    const stored = await waitForMessages(id, 3);
    expect(stored.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant']);
    expect(JSON.stringify(stored[1]?.content)).toContain('Go on.');
  });
});
