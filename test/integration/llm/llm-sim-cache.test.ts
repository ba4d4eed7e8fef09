import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { countTokens } from '../../../src/lib/count-tokens.js';
import { captureError } from './support.js';

/**
 * llm-sim's prompt caching as the providers price it, through the official SDKs over HTTP:
 * Anthropic's cache_control breakpoints (write, read, lookback, TTL, minimum length, per key
 * and model) and OpenAI's automatic prefix caching (chat completions and Responses).
 */

let sim: TestLlmSim;
const anthropicWith = (apiKey: string): Anthropic => new Anthropic({ apiKey, baseURL: sim.url, maxRetries: 0 });
let anthropic: Anthropic;
let openai: OpenAI;
beforeAll(async () => {
  sim = await startTestLlmSim();
  anthropic = anthropicWith('key-a');
  openai = new OpenAI({ apiKey: 'key-a', baseURL: sim.openaiBaseUrl, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.control.reset();
  sim.control.clearCache();
  sim.control.configure({ profile: 'instant', faults: {}, promptCache: {}, cache: { enabled: true, ttlMs: 300_000 }, clockOffsetMs: 0 });
});

/** Distinct lines of log-like text, ~25 tokens each. */
const lines = (tag: string, count: number): string =>
  Array.from(
    { length: count },
    (_, i) => `${tag} line ${i}: the worker retried job ${i * 7} after a timeout in src/queue/worker-${i % 13}.ts.`,
  ).join('\n');
/** A message's tokens as the sim counts them: its text plus 4. */
const tok = (text: string): number => countTokens(text) + 4;
const SONNET = 'claude-opus-4-5';
const HAIKU = 'claude-haiku-4-5';

type Text = Anthropic.TextBlockParam;
const cached = (text: string, ttl?: '5m' | '1h'): Text => ({
  type: 'text',
  text,
  cache_control: { type: 'ephemeral', ...(ttl === undefined ? {} : { ttl }) },
});

describe('Anthropic cache_control breakpoints', () => {
  const system = lines('system', 90);
  const ask = (question: string, model = SONNET, client = anthropic) =>
    client.messages.create({ model, max_tokens: 200, system: [cached(system)], messages: [{ role: 'user', content: question }] });

  it('writes the prefix up to a breakpoint on a miss and reads it on the next request; input_tokens is the rest', async () => {
    expect(tok(system)).toBeGreaterThan(1_024);
    const first = await ask('What failed?');
    expect(first.usage).toMatchObject({
      cache_creation_input_tokens: tok(system),
      cache_read_input_tokens: 0,
      input_tokens: tok('What failed?'),
    });
    expect(first.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: tok(system), ephemeral_1h_input_tokens: 0 });
    const second = await ask('And what then?');
    expect(second.usage).toMatchObject({
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: tok(system),
      input_tokens: tok('And what then?'),
    });
    // the call log records what each call was billed
    expect(sim.control.callLog().map((call) => call.usage)).toEqual([
      { input: tok('What failed?'), cacheRead: 0, cacheWrite: tok(system), output: first.usage.output_tokens },
      { input: tok('And what then?'), cacheRead: tok(system), cacheWrite: 0, output: second.usage.output_tokens },
    ]);
    expect(sim.control.callLog().every((call) => call.compaction === null && call.endpoint === '/v1/messages')).toBe(true);
    // a breakpoint's place is not part of the prefix: the same blocks without it, and one later, read it
    const moved = await anthropic.messages.create({
      model: SONNET,
      max_tokens: 50,
      system: [{ type: 'text', text: system }],
      messages: [{ role: 'user', content: [cached('Which file?')] }],
    });
    expect(moved.usage).toMatchObject({
      cache_read_input_tokens: tok(system),
      cache_creation_input_tokens: tok('Which file?'),
      input_tokens: 0,
    });
  });

  it('reads the previous turn through the lookback when the breakpoint moves to the new last message, within 20 blocks', async () => {
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: lines('paste', 60) },
      { role: 'assistant', content: 'Noted.' },
    ];
    const turn = (question: string) =>
      anthropic.messages.create({ model: SONNET, max_tokens: 50, messages: [...history, { role: 'user', content: [cached(question)] }] });
    const first = await turn('What is failing?');
    const firstTotal = tok(lines('paste', 60)) + tok('Noted.') + tok('What is failing?');
    expect(first.usage).toMatchObject({ cache_creation_input_tokens: firstTotal, cache_read_input_tokens: 0, input_tokens: 0 });

    history.push({ role: 'user', content: 'What is failing?' }, { role: 'assistant', content: 'The worker.' });
    const second = await turn('Which one?');
    expect(second.usage).toMatchObject({
      cache_read_input_tokens: firstTotal,
      cache_creation_input_tokens: tok('The worker.') + tok('Which one?'),
      input_tokens: 0,
    });

    // 22 more blocks between the cached boundary and the new breakpoint: beyond the lookback, a miss
    for (let i = 0; i < 11; i += 1) history.push({ role: 'user', content: `Step ${i}?` }, { role: 'assistant', content: `Done ${i}.` });
    const far = await turn('Anything else?');
    expect(far.usage.cache_read_input_tokens).toBe(0);
    expect(far.usage.cache_creation_input_tokens).toBe(sim.control.callLog().at(-1)?.inputTokens);
  });

  it('expires an entry 5 minutes after its last hit (the sim clock moves through the control API)', async () => {
    await ask('First?');
    sim.control.advanceClock(4 * 60_000);
    expect((await ask('Four minutes later?')).usage.cache_read_input_tokens).toBe(tok(system));
    // the hit refreshed it: 8 minutes after the write, 4 after the hit
    const moved = await fetch(`${sim.url}/_sim/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ advanceMs: 4 * 60_000 }),
    });
    expect(await moved.json()).toMatchObject({ clockOffsetMs: 8 * 60_000 });
    expect((await ask('Eight minutes later?')).usage.cache_read_input_tokens).toBe(tok(system));
    sim.control.advanceClock(5 * 60_000 + 1);
    const expired = await ask('Over five minutes idle?');
    expect(expired.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: tok(system) });
  });

  it('takes the TTL from the config, and ttl "1h" breakpoints live an hour', async () => {
    sim.control.configure({ cache: { ttlMs: 1_000 } });
    await ask('First?');
    sim.control.advanceClock(1_001);
    expect((await ask('Later?')).usage.cache_read_input_tokens).toBe(0);

    const hour = () =>
      anthropic.messages.create({
        model: SONNET,
        max_tokens: 50,
        system: [cached(system, '1h')],
        messages: [{ role: 'user', content: 'Hi?' }],
      });
    sim.control.clearCache();
    expect((await hour()).usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: tok(system) });
    sim.control.advanceClock(30 * 60_000);
    expect((await hour()).usage.cache_read_input_tokens).toBe(tok(system));
  });

  it('does not cache a prefix below the model minimum: 2,048 tokens for Haiku, 1,024 for Sonnet and Opus', async () => {
    const medium = lines('medium', 55);
    expect(tok(medium)).toBeGreaterThan(1_024);
    expect(tok(medium)).toBeLessThan(2_048);
    const call = (model: string) =>
      anthropic.messages.create({ model, max_tokens: 50, system: [cached(medium)], messages: [{ role: 'user', content: 'Q?' }] });
    for (let i = 0; i < 2; i += 1) {
      const haiku = await call(HAIKU);
      expect(haiku.usage).toMatchObject({
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        input_tokens: tok(medium) + tok('Q?'),
      });
    }
    expect((await call(SONNET)).usage.cache_creation_input_tokens).toBe(tok(medium));
    expect((await call(SONNET)).usage.cache_read_input_tokens).toBe(tok(medium));
    // no breakpoint, no caching at all
    const plain = await anthropic.messages.create({ model: SONNET, max_tokens: 50, system, messages: [{ role: 'user', content: 'Q?' }] });
    expect(plain.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  });

  it('makes a written prefix readable from the first token of the response writing it: parallel requests all write', async () => {
    sim.control.setProfile('fixed:300');
    const [a, b] = await Promise.all([ask('Chunk one?'), ask('Chunk two?')]);
    expect([a.usage.cache_creation_input_tokens, b.usage.cache_creation_input_tokens]).toEqual([tok(system), tok(system)]);
    expect([a.usage.cache_read_input_tokens, b.usage.cache_read_input_tokens]).toEqual([0, 0]);
    expect((await ask('After both?')).usage.cache_read_input_tokens).toBe(tok(system));
  });

  it('keeps one cache per API key and per model', async () => {
    expect(tok(system)).toBeGreaterThan(2_048);
    await ask('First?', HAIKU);
    expect((await ask('Same key and model?', HAIKU)).usage.cache_read_input_tokens).toBe(tok(system));
    expect((await ask('Another key?', HAIKU, anthropicWith('key-b'))).usage).toMatchObject({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: tok(system),
    });
    expect((await ask('Another model?', SONNET)).usage).toMatchObject({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: tok(system),
    });
    const entries = (await (await fetch(`${sim.url}/_sim/cache`)).json()) as { entries: Array<{ scope: string; tokens: number }> };
    expect(entries.entries).toHaveLength(3);
    expect(entries.entries.every((entry) => entry.tokens === tok(system) && !entry.scope.includes('key-'))).toBe(true);
    expect((await fetch(`${sim.url}/_sim/cache/clear`, { method: 'POST' })).status).toBe(204);
    expect(sim.control.cacheEntries()).toEqual([]);
  });

  it('hashes tools before system before messages: a changed tool definition misses', async () => {
    const tool = (description: string): Anthropic.Tool => ({
      name: 'read_file',
      description,
      input_schema: { type: 'object', properties: { path: { type: 'string' } } },
    });
    const call = (description: string) =>
      anthropic.messages.create({
        model: SONNET,
        max_tokens: 50,
        tools: [tool(description)],
        system: [cached(system)],
        messages: [{ role: 'user', content: 'Q?' }],
      });
    await call('Reads a file.');
    expect((await call('Reads a file.')).usage.cache_read_input_tokens).toBe(tok(system));
    expect((await call('Reads one file.')).usage.cache_read_input_tokens).toBe(0);
  });

  it('refuses more than 4 breakpoints and an unknown cache_control type; the cache can be switched off', async () => {
    const blocks = Array.from({ length: 5 }, (_, i) => cached(`Part ${i}.`));
    const error = await captureError(
      anthropic.messages.create({ model: SONNET, max_tokens: 50, system: blocks, messages: [{ role: 'user', content: 'Q?' }] }),
    );
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as Error).message).toContain('A maximum of 4 blocks with cache_control may be provided. Found 5.');
    const typed = await captureError(
      anthropic.messages.create({
        model: SONNET,
        max_tokens: 50,
        system: [{ type: 'text', text: 'x', cache_control: { type: 'persistent' } as never }],
        messages: [{ role: 'user', content: 'Q?' }],
      }),
    );
    expect((typed as Error).message).toContain("system.0.cache_control.type: Input should be 'ephemeral'");

    const config = await fetch(`${sim.url}/_sim/config`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cache: { enabled: false } }),
    });
    expect(await config.json()).toMatchObject({ cache: { enabled: false, ttlMs: 300_000 } });
    await ask('Off?');
    expect((await ask('Still off?')).usage).toMatchObject({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      input_tokens: tok(system) + tok('Still off?'),
    });
  });

  it('the fixed promptCache figures still replace the emulation while set', async () => {
    sim.control.configure({ promptCache: { readTokens: 20, writeTokens: 7 } });
    const answer = await ask('Fixed?');
    expect(answer.usage).toMatchObject({
      cache_read_input_tokens: 20,
      cache_creation_input_tokens: 7,
      input_tokens: tok(system) + tok('Fixed?') - 27,
    });
  });
});

describe('OpenAI automatic prefix caching', () => {
  const system = lines('system', 60);

  it('chat completions: a prompt of 1,024 tokens or more is cached; the next one reads its longest cached prefix in 128-token steps', async () => {
    const first = await openai.chat.completions.create({
      model: 'gpt-4.1-mini',
      max_tokens: 100,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: 'What failed?' },
      ],
    });
    expect(first.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    const prefix = tok(system) + tok('What failed?');
    expect(first.usage?.prompt_tokens).toBe(prefix);
    const second = await openai.chat.completions.create({
      model: 'gpt-4.1-mini',
      max_tokens: 100,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: 'What failed?' },
        { role: 'assistant', content: first.choices[0]?.message.content ?? '' },
        { role: 'user', content: 'Why?' },
      ],
    });
    const cachedTokens = Math.floor(prefix / 128) * 128;
    expect(cachedTokens).toBeGreaterThanOrEqual(1_024);
    expect(second.usage?.prompt_tokens_details?.cached_tokens).toBe(cachedTokens);
    // prompt_tokens includes the cached ones; the log bills them apart, and OpenAI writes nothing
    expect(second.usage?.prompt_tokens).toBe(sim.control.callLog()[1]?.inputTokens);
    expect(sim.control.callLog()[1]?.usage).toMatchObject({
      cacheRead: cachedTokens,
      cacheWrite: 0,
      input: (second.usage?.prompt_tokens ?? 0) - cachedTokens,
    });
    // another model: its own cache
    const other = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      max_tokens: 100,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: 'What failed?' },
      ],
    });
    expect(other.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
  });

  it('does not cache a prompt under 1,024 tokens, and expires after the TTL', async () => {
    const short = lines('short', 20);
    expect(tok(short)).toBeLessThan(1_024);
    for (let i = 0; i < 2; i += 1) {
      const answer = await openai.chat.completions.create({
        model: 'gpt-4.1-mini',
        max_tokens: 50,
        messages: [{ role: 'user', content: short }],
      });
      expect(answer.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    }
    const long = () =>
      openai.chat.completions.create({ model: 'gpt-4.1-mini', max_tokens: 50, messages: [{ role: 'user', content: system }] });
    await long();
    sim.control.advanceClock(300_001);
    expect((await long()).usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    expect((await long()).usage?.prompt_tokens_details?.cached_tokens).toBe(Math.floor(tok(system) / 128) * 128);
  });

  it('Responses API: input_tokens_details.cached_tokens, inside input_tokens', async () => {
    const instructions = lines('instructions', 60);
    const first = await openai.responses.create({ model: 'gpt-4.1-mini', instructions, input: 'What failed?' });
    expect(first.usage?.input_tokens_details.cached_tokens).toBe(0);
    expect(first.usage?.input_tokens).toBe(tok(instructions) + tok('What failed?'));
    const second = await openai.responses.create({
      model: 'gpt-4.1-mini',
      instructions,
      input: [
        { role: 'user', content: 'What failed?' },
        { role: 'assistant', content: first.output_text },
        { role: 'user', content: 'Why?' },
      ],
    });
    expect(second.usage?.input_tokens_details.cached_tokens).toBe(Math.floor((tok(instructions) + tok('What failed?')) / 128) * 128);
    expect(second.usage?.input_tokens).toBe(sim.control.callLog()[1]?.inputTokens);
    expect(sim.control.callLog().map((call) => call.endpoint)).toEqual(['/v1/responses', '/v1/responses']);
  });
});
