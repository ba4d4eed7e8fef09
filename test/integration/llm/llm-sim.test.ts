import Anthropic from '@anthropic-ai/sdk';
import { countTokens } from 'gpt-tokenizer';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { waitFor } from '../../../harness/wait-for.js';
import { extractIdentifiers, findMissingIdentifiers } from '../../../src/compaction/summarize/index.js';
import { startLlmSim } from '../../../src/llm-sim/server.js';
import { realCompactionRequest } from './compaction-request.js';
import { captureError, SECTION_HEADINGS } from './support.js';

/** llm-sim as the official SDKs and other processes see it: streaming, control endpoints, faults, loss. */

let sim: TestLlmSim;
let anthropic: Anthropic;
let openai: OpenAI;
beforeAll(async () => {
  sim = await startTestLlmSim();
  anthropic = new Anthropic({ apiKey: 'k', baseURL: sim.url, maxRetries: 0 });
  openai = new OpenAI({ apiKey: 'k', baseURL: sim.openaiBaseUrl, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.control.reset();
  sim.control.configure({ profile: 'instant', faults: {}, lossRate: 0, seed: 1 });
});

const request = realCompactionRequest(countTokens, 3_000, 1_000);
const anthropicParams = {
  model: 'claude-haiku-4-5',
  max_tokens: request.maxOutputTokens,
  system: request.system,
  messages: request.messages.map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content })),
};
const openaiParams = {
  model: 'gpt-4o-mini',
  max_tokens: request.maxOutputTokens,
  messages: [{ role: 'system' as const, content: request.system }, ...request.messages],
};

describe('streaming through the SDKs', () => {
  it('Anthropic: the SSE event sequence assembles into the same message as the JSON answer', async () => {
    const plain = await anthropic.messages.create(anthropicParams);
    const streamed = await anthropic.messages.stream(anthropicParams).finalMessage();
    expect(streamed.content).toEqual(plain.content);
    expect(streamed.stop_reason).toBe('end_turn');
    expect(streamed.usage.input_tokens).toBe(plain.usage.input_tokens);
    expect(streamed.usage.output_tokens).toBe(plain.usage.output_tokens);
    for (const heading of SECTION_HEADINGS) expect(JSON.stringify(streamed.content)).toContain(heading);
  });

  it('OpenAI: chunks join into the JSON answer, with a usage chunk when asked', async () => {
    const plain = await openai.chat.completions.create(openaiParams);
    const stream = await openai.chat.completions.create({ ...openaiParams, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(plain.choices[0]?.message.content);
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBe(plain.usage?.completion_tokens);
  });

  it('paces a stream on the profile clock: first token, then the output rate', async () => {
    sim.control.setProfile({ name: 'test', firstTokenMs: 200, prefillTokensPerSecond: Infinity, outputTokensPerSecond: 500 });
    const startedAt = performance.now();
    let firstAt = 0;
    const stream = anthropic.messages.stream(anthropicParams).on('text', () => {
      firstAt ||= performance.now() - startedAt;
    });
    const outputTokens = (await stream.finalMessage()).usage.output_tokens;
    const totalMs = performance.now() - startedAt;
    expect(firstAt).toBeGreaterThanOrEqual(195);
    expect(firstAt).toBeLessThan(600);
    const expectedMs = 200 + ((outputTokens - 1) / 500) * 1000;
    expect(totalMs).toBeGreaterThanOrEqual(expectedMs - 10);
    expect(totalMs).toBeLessThan(expectedMs + 500);
  });
});

describe('answers', () => {
  it('honours max_tokens: stops there with stop_reason max_tokens', async () => {
    const message = await anthropic.messages.create({ ...anthropicParams, max_tokens: 40 });
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage.output_tokens).toBeLessThanOrEqual(40);
  });

  it('echoes the input identifiers, and drops a seeded fraction of them with a loss rate', async () => {
    const input = request.messages
      .slice(0, -1)
      .map((m) => m.content)
      .join('\n');
    const text = async (): Promise<string> => {
      const message = await anthropic.messages.create({ ...anthropicParams, max_tokens: 4_000 });
      return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    };
    sim.control.configure({ outputRatio: 2 });
    const identifiers = extractIdentifiers(input);
    expect(identifiers.length).toBeGreaterThan(10);
    expect(findMissingIdentifiers(identifiers, await text())).toEqual([]);

    sim.control.configure({ lossRate: 0.5 });
    const lossy = await text();
    const missing = findMissingIdentifiers(identifiers, lossy);
    expect(missing.length).toBeGreaterThan(identifiers.length * 0.2);
    expect(missing.length).toBeLessThan(identifiers.length * 0.8);
    expect(await text()).toBe(lossy);
  });

  it('answers inputs above --summarize-window with the provider context-length error', async () => {
    sim.control.configure({ summarizeWindow: 500 });
    const error = await captureError(openai.chat.completions.create(openaiParams));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('context_length_exceeded');
    sim.control.configure({ summarizeWindow: null });
  });

  it('draws faults from the seed: the same seed gives the same sequence', async () => {
    const sequence = async (seed: number): Promise<Array<string | null>> => {
      const other = await startLlmSim({ seed, faults: { rates: { server_error: 0.3, rate_limit: 0.2 } } });
      const client = new OpenAI({ apiKey: 'k', baseURL: `${other.url}/v1`, maxRetries: 0 });
      for (let i = 0; i < 20; i += 1) await client.chat.completions.create({ ...openaiParams, max_tokens: 50 }).catch(() => undefined);
      const faults = other.callLog().map((call) => call.fault);
      await other.close();
      return faults;
    };
    const first = await sequence(42);
    expect(await sequence(42)).toEqual(first);
    expect(first.filter((f) => f !== null).length).toBeGreaterThan(2);
    expect(first.filter((f) => f === null).length).toBeGreaterThan(2);
  });
});

describe('control endpoints and call log', () => {
  it('configures faults, lists calls and resets over HTTP', async () => {
    const post = (path: string, body?: unknown): Promise<Response> =>
      fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
    expect((await post('/_sim/config', { faults: { script: ['overloaded'] } })).status).toBe(200);
    expect(await captureError(anthropic.messages.create(anthropicParams))).toBeInstanceOf(Anthropic.InternalServerError);
    await anthropic.messages.create(anthropicParams);

    const log = (await (await fetch(`${sim.url}/_sim/calls`)).json()) as { calls: Array<Record<string, unknown>> };
    expect(log.calls.map((c) => [c['fault'], c['status'], c['outcome']])).toEqual([
      ['overloaded', 529, 'error'],
      [null, 200, 'ok'],
    ]);
    expect(log.calls[1]).toMatchObject({ api: 'anthropic', model: 'claude-haiku-4-5', concurrencyAtStart: 1 });
    expect(Number(log.calls[1]?.['endMs'])).toBeGreaterThanOrEqual(Number(log.calls[1]?.['startMs']));
    expect(log.calls[1]).not.toHaveProperty('body');

    expect((await post('/_sim/config', { lossRate: 3 })).status).toBe(400);
    expect((await post('/_sim/reset')).status).toBe(204);
    expect(((await (await fetch(`${sim.url}/_sim/calls`)).json()) as { calls: unknown[] }).calls).toEqual([]);
  });

  it('records the concurrency each call started with', async () => {
    sim.control.setProfile('fixed:300');
    await Promise.all([1, 2, 3].map(() => openai.chat.completions.create({ ...openaiParams, max_tokens: 50 })));
    expect(Math.max(...sim.control.callLog().map((c) => c.concurrencyAtStart))).toBe(3);
  });

  it('lists models in a shape both SDKs accept', async () => {
    expect((await openai.models.list()).data.map((m) => m.id)).toContain('gpt-4o-mini');
    expect((await anthropic.models.list()).data.map((m) => m.id)).toContain('claude-haiku-4-5');
  });

  it('ends a hanging call when it closes', async () => {
    const other = await startLlmSim({ faults: { script: ['hang'] } });
    const client = new Anthropic({ apiKey: 'k', baseURL: other.url, maxRetries: 0, timeout: 30_000 });
    const pending = captureError(client.messages.create(anthropicParams));
    await waitFor(() => other.inFlight() === 1, 5_000);
    await other.close();
    expect(await pending).toBeInstanceOf(Anthropic.APIConnectionError);
    expect(other.callLog()[0]?.outcome).toBe('disconnected');
  });
});
