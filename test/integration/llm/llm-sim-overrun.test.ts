import Anthropic from '@anthropic-ai/sdk';
import { countTokens } from 'gpt-tokenizer';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { LENGTH_PREFIX } from '../../../src/compaction/summarize/prompt.js';
import { realCompactionRequest } from './compaction-request.js';

/**
 * llm-sim's length overrun: a share of answers runs past the length the directive asks for
 * by a configurable factor, as real models do; max_tokens below that stops the answer there
 * with the providers' own stop reasons.
 */

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
  sim.control.configure({ profile: 'instant', faults: {}, seed: 1, overrun: { rate: 0, factor: 1.5 } });
});

// asks for 300 words (500 tokens) of a ~6,000-token excerpt: there is more to say than that
const base = realCompactionRequest(countTokens, 6_000, 4_000);
const ASKED = 500;
const messages = base.messages.map((m, i) =>
  i === base.messages.length - 1
    ? { role: 'user' as const, content: `${m.content}\n\n${LENGTH_PREFIX}300 words.` }
    : { role: m.role as 'user' | 'assistant', content: m.content },
);
const ask = (maxTokens: number) =>
  anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: maxTokens, system: base.system, messages });

describe('llm-sim length overrun', () => {
  it('answers within the requested length when no answer overruns, whatever max_tokens allows', async () => {
    const message = await ask(4_000);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.output_tokens).toBeLessThanOrEqual(ASKED);
    expect(message.usage.output_tokens).toBeGreaterThan(ASKED * 0.8);
    expect(sim.control.callLog()[0]).toMatchObject({ requestedTokens: ASKED, overrun: false });
  });

  it('runs past the requested length by the factor, and stops at max_tokens below that as providers do', async () => {
    sim.control.configure({ overrun: { rate: 1, factor: 2 } });
    const free = await ask(4_000);
    expect(free.stop_reason).toBe('end_turn');
    expect(free.usage.output_tokens).toBeGreaterThan(ASKED * 1.6);
    expect(free.usage.output_tokens).toBeLessThanOrEqual(ASKED * 2);

    const capped = await ask(700);
    expect(capped.stop_reason).toBe('max_tokens');
    expect(capped.usage.output_tokens).toBe(700);

    const chat = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      max_tokens: 700,
      messages: [{ role: 'system', content: base.system }, ...messages],
    });
    expect(chat.choices[0]?.finish_reason).toBe('length');
    expect(chat.usage?.completion_tokens).toBe(700);
    expect(sim.control.callLog().map((c) => c.overrun)).toEqual([true, true, true]);
  });

  it('draws which answers overrun from the seed, apart from the faults', async () => {
    sim.control.configure({ overrun: { rate: 0.5, factor: 1.5 }, faults: { rates: { server_error: 0.3 } } });
    const run = async () => {
      sim.control.reset();
      const outcomes: string[] = [];
      for (let i = 0; i < 12; i += 1) {
        await ask(4_000).catch(() => undefined);
      }
      for (const call of sim.control.callLog()) outcomes.push(`${call.fault ?? '-'}/${call.overrun}`);
      return outcomes;
    };
    const first = await run();
    expect(await run()).toEqual(first);
    const overruns = first.filter((o) => o.endsWith('/true')).length;
    expect(overruns).toBeGreaterThan(0);
    expect(overruns).toBeLessThan(12);
    // the fault sequence is the one the seed gave before overruns existed
    sim.control.configure({ overrun: { rate: 0 } });
    expect((await run()).map((o) => o.split('/')[0])).toEqual(first.map((o) => o.split('/')[0]));
  });

  it('rejects an out-of-range overrun over the control endpoint', async () => {
    const response = await fetch(`${sim.url}/_sim/config`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ overrun: { factor: 0.5 } }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/overrun\.factor/);
    const config = (await (await fetch(`${sim.url}/_sim/config`)).json()) as { overrun: unknown };
    expect(config.overrun).toEqual({ rate: 0, factor: 1.5 });
  });
});
