import Anthropic from '@anthropic-ai/sdk';
import type {
  BetaCompactionBlock,
  BetaMessage,
  BetaMessageParam,
  MessageCreateParamsNonStreaming,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import OpenAI from 'openai';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { countTokens } from '../../../src/lib/count-tokens.js';
import { captureError } from './support.js';

/**
 * The providers' compactions in llm-sim, through the official SDKs over HTTP: Anthropic's
 * on-demand compaction (beta compact-2026-09-04) and threshold mode (compact_20260112),
 * OpenAI's /responses/compact and compaction_trigger, and the Responses API they ride on.
 */

let sim: TestLlmSim;
let anthropic: Anthropic;
let openai: OpenAI;
beforeAll(async () => {
  sim = await startTestLlmSim();
  anthropic = new Anthropic({ apiKey: 'key-a', baseURL: sim.url, maxRetries: 0 });
  openai = new OpenAI({ apiKey: 'key-a', baseURL: sim.openaiBaseUrl, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.control.reset();
  sim.control.clearCache();
  sim.control.configure({ profile: 'instant', faults: {}, lossRate: 0, seed: 1, cache: { enabled: true, ttlMs: 300_000 } });
});

const lines = (tag: string, count: number): string =>
  Array.from(
    { length: count },
    (_, i) => `${tag} line ${i}: the worker retried job ${i * 7} after a timeout in src/queue/worker-${i % 13}.ts.`,
  ).join('\n');
const tok = (text: string): number => countTokens(text) + 4;
const MODEL = 'claude-opus-4-5';
const BETA = 'compact-2026-09-04';
const SYSTEM = 'You are a coding agent working in the compactd repository.';

const history = (): BetaMessageParam[] => [
  { role: 'user', content: `Here is the worker log.\n${lines('log', 40)}` },
  { role: 'assistant', content: 'The worker times out on jobs in src/queue/worker-3.ts. We decided to raise the timeout.' },
  { role: 'user', content: 'Please fix src/queue/worker-3.ts next, and never touch migrations/0001_init.sql.' },
  { role: 'assistant', content: 'I will patch the timeout in src/queue/worker-3.ts and run the tests.' },
];
const compactParams = (messages = history()): MessageCreateParamsNonStreaming => ({
  model: MODEL,
  max_tokens: 4_000,
  betas: [BETA],
  system: SYSTEM,
  messages,
  compaction: { type: 'summarize' },
});
const blockOf = (message: BetaMessage): BetaCompactionBlock => message.content[0] as BetaCompactionBlock;
const continueFrom = (block: BetaCompactionBlock | Record<string, unknown>, betas: string[] = [BETA]) =>
  anthropic.beta.messages.create({
    model: MODEL,
    max_tokens: 100,
    betas,
    system: SYSTEM,
    messages: [
      { role: 'assistant', content: [block as BetaCompactionBlock] },
      { role: 'user', content: 'Continue.' },
    ],
  });
const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

describe('Anthropic on-demand compaction (compact-2026-09-04)', () => {
  it('answers one signed compaction block with stop_reason compaction and its cost in usage.iterations', async () => {
    const answer = await anthropic.beta.messages.create(compactParams());
    expect(answer.stop_reason).toBe('compaction');
    expect(answer.content).toHaveLength(1);
    const block = blockOf(answer);
    expect(Object.keys(block)).toEqual(['type', 'content', 'signature']);
    expect(block.type).toBe('compaction');
    expect(block.content).toContain('src/queue/worker-3.ts');
    expect(block.content).toContain('## NEXT STEPS');
    expect(block.signature).toMatch(/^simsig1\./);
    const input = tok(SYSTEM) + history().reduce((sum, m) => sum + tok(m.content as string), 0);
    expect(answer.usage.iterations).toEqual([
      {
        type: 'compaction',
        input_tokens: input,
        output_tokens: countTokens(block.content ?? ''),
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    ]);
    expect(answer.usage).toMatchObject({ input_tokens: input, output_tokens: countTokens(block.content ?? '') });
    expect(sim.control.callLog()[0]).toMatchObject({
      compaction: 'summarize',
      usage: { input, cacheRead: 0, cacheWrite: 0, output: answer.usage.output_tokens },
    });

    // the block opens the next request, byte-exact, and the model reads from it on
    const next = await continueFrom(block);
    expect(next.stop_reason).toBe('end_turn');
    expect(sim.control.callLog()[1]).toMatchObject({
      compaction: null,
      inputTokens: tok(SYSTEM) + tok(block.content ?? '') + tok('Continue.'),
    });
    // in a user turn too, followed by other blocks
    await anthropic.beta.messages.create({
      model: MODEL,
      max_tokens: 50,
      betas: [BETA],
      messages: [{ role: 'user', content: [block, { type: 'text', text: 'Go on.' }] }],
    });
  });

  it('streams the compaction: the SDK assembles the same message', async () => {
    const plain = await anthropic.beta.messages.create(compactParams());
    const stream = anthropic.beta.messages.stream(compactParams());
    const events: string[] = [];
    stream.on('streamEvent', (event) => events.push(event.type === 'content_block_delta' ? event.delta.type : event.type));
    const streamed = await stream.finalMessage();
    expect(streamed.content).toEqual(plain.content);
    expect(streamed.stop_reason).toBe('compaction');
    expect(streamed.usage.iterations).toEqual(plain.usage.iterations);
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      'compaction_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    await continueFrom(blockOf(streamed));
  });

  it('reads the agent cached prefix when the compaction request repeats its system, tools and messages', async () => {
    const messages = history();
    const last = messages[messages.length - 1] as BetaMessageParam;
    messages[messages.length - 1] = {
      role: last.role,
      content: [{ type: 'text', text: last.content as string, cache_control: { type: 'ephemeral' } }],
    };
    const agent = await anthropic.beta.messages.create({ model: MODEL, max_tokens: 50, system: SYSTEM, messages });
    const prefix = agent.usage.cache_creation_input_tokens ?? 0;
    expect(prefix).toBeGreaterThan(1_000);
    const compaction = await anthropic.beta.messages.create(compactParams(messages));
    const [iteration] = compaction.usage.iterations ?? [];
    expect(iteration).toMatchObject({ type: 'compaction', cache_read_input_tokens: prefix, cache_creation_input_tokens: 0 });
    expect(sim.control.callLog()[1]?.usage.cacheRead).toBeGreaterThanOrEqual(0.9 * (sim.control.callLog()[1]?.inputTokens ?? 0));
  });

  it('refuses a block whose signature the sim did not issue, whose content changed, or that does not open messages', async () => {
    const block = blockOf(await anthropic.beta.messages.create(compactParams()));
    const signature = block.signature ?? '';
    const forged = await captureError(continueFrom({ ...block, signature: `${signature.slice(0, -4)}AAAA` }));
    expect(forged).toBeInstanceOf(Anthropic.BadRequestError);
    expect(messageOf(forged)).toMatch(/compaction_signature_invalid: messages\.0\.content\.0\.signature/);
    expect(messageOf(await captureError(continueFrom({ ...block, signature: 'not-a-signature' })))).toMatch(/compaction_signature_invalid/);
    expect(messageOf(await captureError(continueFrom({ type: 'compaction', content: block.content })))).toMatch(
      /compaction_signature_invalid/,
    );

    const edited = await captureError(continueFrom({ ...block, content: `${block.content ?? ''} ` }));
    expect(edited).toBeInstanceOf(Anthropic.BadRequestError);
    expect(messageOf(edited)).toMatch(/compaction_content_mismatch: messages\.0\.content\.0\.content/);

    const later = await captureError(
      anthropic.beta.messages.create({
        model: MODEL,
        max_tokens: 50,
        betas: [BETA],
        messages: [
          { role: 'user', content: 'Earlier.' },
          { role: 'assistant', content: [block] },
          { role: 'user', content: 'Continue.' },
        ],
      }),
    );
    expect(later).toBeInstanceOf(Anthropic.BadRequestError);
    expect(messageOf(later)).toMatch(/compaction_block_misplaced: messages\.1\.content\.0/);
    const twice = await captureError(
      anthropic.beta.messages.create({
        model: MODEL,
        max_tokens: 50,
        betas: [BETA],
        messages: [
          { role: 'assistant', content: [block, block] },
          { role: 'user', content: 'Continue.' },
        ],
      }),
    );
    expect(messageOf(twice)).toMatch(/compaction_block_misplaced: messages\.0\.content\.1: a request carries at most one compaction block/);
  });

  it('needs the beta header on the compaction request and on every request carrying the block', async () => {
    const withoutBeta = await captureError(anthropic.beta.messages.create({ ...compactParams(), betas: [] }));
    expect(withoutBeta).toBeInstanceOf(Anthropic.BadRequestError);
    expect(messageOf(withoutBeta)).toContain(BETA);
    const block = blockOf(await anthropic.beta.messages.create({ ...compactParams(), betas: ['context-management-2025-06-27', BETA] }));
    const carried = await captureError(continueFrom(block, []));
    expect(carried).toBeInstanceOf(Anthropic.BadRequestError);
    expect(messageOf(carried)).toMatch(/anthropic-beta: .*compact-2026-09-04/);
  });

  it('refuses compaction together with context_management, and after an unanswered tool call', async () => {
    const managed = await captureError(
      anthropic.beta.messages.create({ ...compactParams(), context_management: { edits: [{ type: 'compact_20260112' }] } }),
    );
    expect(managed).toBeInstanceOf(Anthropic.BadRequestError);
    expect(messageOf(managed)).toContain('compaction: cannot be combined with context_management');

    const pending: BetaMessageParam[] = [
      ...history(),
      { role: 'user', content: 'Run the tests.' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'npm test' } }] },
    ];
    const unanswered = await captureError(anthropic.beta.messages.create(compactParams(pending)));
    expect(unanswered).toBeInstanceOf(Anthropic.BadRequestError);
    expect(messageOf(unanswered)).toContain('compaction: the conversation ends with an unanswered tool call (toolu_1)');
    // answered, it compacts
    pending.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '12 passed' }] });
    expect((await anthropic.beta.messages.create(compactParams(pending))).stop_reason).toBe('compaction');
    expect(sim.control.callLog()).toHaveLength(1);
  });

  it('a failed compaction (empty fault) answers content null, which later requests may carry as a no-op', async () => {
    sim.control.setFaults({ script: ['empty'] });
    const failed = await anthropic.beta.messages.create(compactParams());
    expect(failed.content).toEqual([{ type: 'compaction', content: null, signature: null }]);
    await anthropic.beta.messages.create({
      model: MODEL,
      max_tokens: 50,
      betas: [BETA],
      messages: [
        { role: 'user', content: 'Hi.' },
        { role: 'assistant', content: failed.content },
        { role: 'user', content: 'Again.' },
      ],
    });
  });
});

describe('Anthropic threshold mode (compact_20260112)', () => {
  const managed = (value: number, extra: Record<string, unknown> = {}) => ({
    edits: [{ type: 'compact_20260112' as const, trigger: { type: 'input_tokens' as const, value }, ...extra }],
  });

  it('over the trigger, the answer starts with the compaction block, then the answer; the next request counts from the block on', async () => {
    const answer = await anthropic.beta.messages.create({
      model: MODEL,
      max_tokens: 300,
      system: SYSTEM,
      messages: history(),
      context_management: managed(500),
    });
    expect(answer.stop_reason).toBe('end_turn');
    const [block, text] = answer.content;
    expect(Object.keys(block ?? {})).toEqual(['type', 'content', 'encrypted_content']);
    expect(block).toMatchObject({ type: 'compaction', encrypted_content: expect.stringMatching(/^simenc1\./) });
    expect(text?.type).toBe('text');
    const compactionOut = countTokens((block as BetaCompactionBlock).content ?? '');
    expect(answer.usage.iterations?.map((it) => it.type)).toEqual(['compaction', 'message']);
    const [compacting, answering] = answer.usage.iterations ?? [];
    expect(compacting).toMatchObject({ output_tokens: compactionOut });
    // the top level is the message iteration, as the API reports it
    expect(answer.usage).toMatchObject({ input_tokens: answering?.input_tokens, output_tokens: answering?.output_tokens });
    const [call] = sim.control.callLog();
    expect(call).toMatchObject({
      compaction: 'compact_20260112',
      usage: {
        input: (compacting?.input_tokens ?? 0) + (answering?.input_tokens ?? 0),
        output: compactionOut + (answering?.output_tokens ?? 0),
      },
    });

    const next = await anthropic.beta.messages.create({
      model: MODEL,
      max_tokens: 100,
      system: SYSTEM,
      messages: [...history(), { role: 'assistant', content: answer.content }, { role: 'user', content: 'Go on.' }],
      context_management: managed(500_000),
    });
    expect(next.content.map((b) => b.type)).toEqual(['text']);
    const assistantText = [(block as BetaCompactionBlock).content, (text as Anthropic.TextBlock).text].join('\n');
    expect(sim.control.callLog()[1]).toMatchObject({ compaction: null, inputTokens: tok(SYSTEM) + tok(assistantText) + tok('Go on.') });
  });

  it('under the trigger nothing is compacted; paused, the block comes alone with stop_reason compaction', async () => {
    const under = await anthropic.beta.messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: history(),
      context_management: managed(100_000),
    });
    expect(under.content.map((b) => b.type)).toEqual(['text']);
    expect(under.usage.iterations ?? undefined).toBeUndefined();
    const paused = await anthropic.beta.messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: history(),
      context_management: managed(500, { pause_after_compaction: true }),
    });
    expect(paused.stop_reason).toBe('compaction');
    expect(paused.content.map((b) => b.type)).toEqual(['compaction']);
    expect(sim.control.callLog().map((call) => call.compaction)).toEqual([null, 'compact_20260112']);
  });

  it('streams the block before the answer; refuses a block whose encrypted_content or content was changed', async () => {
    const params = { model: MODEL, max_tokens: 300, messages: history(), context_management: managed(500) };
    const plain = await anthropic.beta.messages.create(params);
    const streamed = await anthropic.beta.messages.stream(params).finalMessage();
    expect(streamed.content).toEqual(plain.content);
    expect(streamed.usage.iterations).toEqual(plain.usage.iterations);

    const block = plain.content[0] as BetaCompactionBlock;
    const carry = (changed: Record<string, unknown>) =>
      anthropic.beta.messages.create({
        model: MODEL,
        max_tokens: 50,
        messages: [
          { role: 'user', content: 'Start.' },
          { role: 'assistant', content: [changed as unknown as BetaCompactionBlock] },
          { role: 'user', content: 'Go on.' },
        ],
      });
    expect(messageOf(await captureError(carry({ ...block, encrypted_content: 'simenc1.AAAA' })))).toMatch(
      /compaction_signature_invalid: messages\.1\.content\.0\.encrypted_content/,
    );
    expect(messageOf(await captureError(carry({ ...block, content: 'Something else entirely.' })))).toMatch(/compaction_content_mismatch/);
    const misplaced = await captureError(
      anthropic.beta.messages.create({
        model: MODEL,
        max_tokens: 50,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Start.' }, block] },
          { role: 'assistant', content: 'Ok.' },
          { role: 'user', content: 'Go.' },
        ],
      }),
    );
    expect(messageOf(misplaced)).toMatch(/compaction_block_misplaced: messages\.0\.content\.1/);
  });
});

describe('OpenAI Responses API', () => {
  const instructions = 'You are a coding agent.';

  it('answers a string input and streams the same response through the SDK', async () => {
    const params = { model: 'gpt-4.1-mini', instructions, input: `Summarize the log.\n${lines('log', 30)}` };
    const plain = await openai.responses.create(params);
    expect(plain).toMatchObject({ object: 'response', status: 'completed', model: 'gpt-4.1-mini', instructions });
    expect(plain.output).toHaveLength(1);
    expect(plain.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(plain.output_text).toContain('src/queue/worker-3.ts');
    const input = tok(instructions) + tok(params.input);
    expect(plain.usage).toEqual({
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: countTokens(plain.output_text),
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + countTokens(plain.output_text),
    });

    const stream = openai.responses.stream(params);
    const events: string[] = [];
    for await (const event of stream) events.push(event.type);
    const streamed = await stream.finalResponse();
    expect(streamed.output_text).toBe(plain.output_text);
    expect(streamed.usage?.output_tokens).toBe(plain.usage?.output_tokens);
    expect(events[0]).toBe('response.created');
    expect(events.at(-1)).toBe('response.completed');
    expect(events).toContain('response.output_item.added');
    expect(events).toContain('response.output_text.delta');
    expect(events).toContain('response.output_item.done');
  });

  it('takes function calls and their outputs, and refuses an unpaired one or a previous_response_id', async () => {
    const call: ResponseInputItem = { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"src/a.ts"}' };
    const output: ResponseInputItem = { type: 'function_call_output', call_id: 'call_1', output: 'export const a = 1;' };
    const ok = await openai.responses.create({ model: 'gpt-4.1-mini', input: [{ role: 'user', content: 'Read src/a.ts.' }, call, output] });
    expect(ok.status).toBe('completed');
    const missing = await captureError(
      openai.responses.create({ model: 'gpt-4.1-mini', input: [{ role: 'user', content: 'Read src/a.ts.' }, call] }),
    );
    expect(missing).toBeInstanceOf(OpenAI.BadRequestError);
    expect(messageOf(missing)).toContain('No tool output found for function call call_1');
    const stray = await captureError(openai.responses.create({ model: 'gpt-4.1-mini', input: [{ role: 'user', content: 'Hi.' }, output] }));
    expect(messageOf(stray)).toContain('No tool call found for function call output with call_id call_1');
    // Codex's local shell calls are answered by function_call_output items
    const shell = {
      type: 'local_shell_call',
      call_id: 'call_2',
      status: 'completed',
      action: { type: 'exec', command: ['ls'] },
    } as ResponseInputItem;
    const listed: ResponseInputItem = { type: 'function_call_output', call_id: 'call_2', output: 'src\ntest' };
    expect(
      (await openai.responses.create({ model: 'gpt-4.1-mini', input: [{ role: 'user', content: 'List.' }, shell, listed] })).status,
    ).toBe('completed');
    const previous = await captureError(openai.responses.create({ model: 'gpt-4.1-mini', previous_response_id: 'resp_123', input: 'Hi.' }));
    expect((previous as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('previous_response_not_found');
  });
});

describe('OpenAI compaction', () => {
  const instructions = `You are a coding agent.\n${lines('rules', 50)}`;
  const tools = [
    {
      type: 'function' as const,
      name: 'read_file',
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
      strict: false,
    },
  ];
  const items = (): ResponseInputItem[] => [
    { role: 'user', content: `Here is the worker log.\n${lines('log', 40)}` },
    { role: 'assistant', content: 'The worker times out in src/queue/worker-3.ts.' },
    { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"src/queue/worker-3.ts"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'const TIMEOUT_MS = 1000;' },
    { role: 'user', content: 'Raise the timeout and keep src/queue/worker-3.ts small.' },
  ];

  it('/responses/compact returns the user messages then an opaque compaction item, which a later request may carry', async () => {
    const compacted = await openai.responses.compact({ model: 'gpt-4.1-mini', instructions, input: items() });
    expect(compacted.object).toBe('response.compaction');
    expect(compacted.output.map((item) => [item.type, 'role' in item ? item.role : null])).toEqual([
      ['message', 'user'],
      ['message', 'user'],
      ['compaction', null],
    ]);
    const item = compacted.output[2] as { type: 'compaction'; encrypted_content: string };
    expect(item.encrypted_content).toMatch(/^simenc1\./);
    expect(item.encrypted_content).not.toContain('worker');
    expect(compacted.usage.output_tokens).toBeGreaterThan(0);
    expect(sim.control.callLog()[0]).toMatchObject({ endpoint: '/v1/responses/compact', compaction: 'responses_compact' });

    const next = await openai.responses.create({
      model: 'gpt-4.1-mini',
      instructions,
      input: [...(compacted.output as ResponseInputItem[]), { role: 'user', content: 'What is next?' }],
    });
    expect(next.status).toBe('completed');
    // the model reads the kept user messages, the hidden summary (what the compaction wrote) and the new turn
    const users = items().flatMap((i) => ('role' in i && i.role === 'user' ? [tok(i.content as string)] : []));
    const expected = tok(instructions) + users.reduce((a, b) => a + b, 0) + compacted.usage.output_tokens + 4 + tok('What is next?');
    expect(sim.control.callLog()[1]?.inputTokens).toBe(expected);

    // Codex's older item name is the same item
    await openai.responses.create({
      model: 'gpt-4.1-mini',
      input: [
        { type: 'compaction_summary', encrypted_content: item.encrypted_content } as unknown as ResponseInputItem,
        { role: 'user', content: 'Next?' },
      ],
    });

    const forged = await captureError(
      openai.responses.create({
        model: 'gpt-4.1-mini',
        input: [
          { type: 'compaction', encrypted_content: `${item.encrypted_content.slice(0, -6)}AAAAAA` },
          { role: 'user', content: 'Next?' },
        ],
      }),
    );
    expect(forged).toBeInstanceOf(OpenAI.BadRequestError);
    expect((forged as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('invalid_encrypted_content');
    expect((forged as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input[0].encrypted_content');
  });

  it('a compaction_trigger item answers the compaction inside a normal response, reading the agent cached prefix', async () => {
    const agent = await openai.responses.create({ model: 'gpt-4.1-mini', instructions, tools, input: items() });
    expect(agent.usage?.input_tokens_details.cached_tokens).toBe(0);
    const params = { model: 'gpt-4.1-mini', instructions, tools, input: [...items(), { type: 'compaction_trigger' } as ResponseInputItem] };
    const triggered = await openai.responses.create(params);
    expect(triggered.object).toBe('response');
    expect(triggered.output.map((item) => item.type)).toEqual(['message', 'message', 'compaction']);
    const [call] = sim.control.callLog().slice(1);
    expect(call).toMatchObject({ endpoint: '/v1/responses', compaction: 'compaction_trigger' });
    // the prompt is the agent's, so its cache is read, not written again
    expect(triggered.usage?.input_tokens).toBe(agent.usage?.input_tokens);
    expect(triggered.usage?.input_tokens_details.cached_tokens).toBe(Math.floor((agent.usage?.input_tokens ?? 0) / 128) * 128);
    expect(call?.usage.cacheRead ?? 0).toBeGreaterThanOrEqual(0.9 * (call?.inputTokens ?? 0));

    const stream = openai.responses.stream(params);
    const events: string[] = [];
    for await (const event of stream) events.push(event.type);
    const streamed = await stream.finalResponse();
    const summary = (output: unknown[]) =>
      (output as Array<{ type: string; role?: string; content?: Array<{ text: string }>; encrypted_content?: string }>).map((item) => [
        item.type,
        item.role,
        item.content?.[0]?.text,
        item.encrypted_content,
      ]);
    expect(summary(streamed.output)).toEqual(summary(triggered.output));
    expect(events.filter((type) => type === 'response.output_item.done')).toHaveLength(3);
    expect(events.at(-1)).toBe('response.completed');

    const notLast = await captureError(
      openai.responses.create({ ...params, input: [{ type: 'compaction_trigger' } as ResponseInputItem, ...items()] }),
    );
    expect(messageOf(notLast)).toContain("a 'compaction_trigger' item must be the final input item");
  });
});
