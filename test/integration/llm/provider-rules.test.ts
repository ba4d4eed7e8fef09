import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { ANTHROPIC_RULES, OPENAI_RULES } from '../../fixtures/provider-rules.js';
import { captureError } from './support.js';

/**
 * llm-sim holds requests to the real APIs' message rules (SPEC §7): each rule's accepted
 * request is answered 200 through the official SDK, its rejected twin is refused with 400
 * in the API's own error shape, naming the field, and is never logged as a completion.
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
  sim.control.configure({ profile: 'instant', faults: {}, lossRate: 0, seed: 1 });
});

type AnthropicBody = Anthropic.Messages.MessageCreateParamsNonStreaming;
type OpenAIBody = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;

describe('Anthropic Messages rules through the SDK', () => {
  for (const c of ANTHROPIC_RULES) {
    it(c.rule, async () => {
      const accepted = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 200, ...c.accepted } as AnthropicBody);
      expect(accepted.type).toBe('message');
      const error = await captureError(
        anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 200, ...c.rejected } as AnthropicBody),
      );
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      const body = (error as InstanceType<typeof Anthropic.BadRequestError>).error as {
        type: string;
        error: { type: string; message: string };
      };
      expect(body.type).toBe('error');
      expect(body.error.type).toBe('invalid_request_error');
      expect(body.error.message.startsWith(`${c.at}: `)).toBe(true);
      expect(sim.control.callLog()).toHaveLength(1);
    });
  }

  it('a streamed request is refused before any event, the same way', async () => {
    const error = await captureError(
      anthropic.messages
        .stream({ model: 'claude-haiku-4-5', max_tokens: 200, ...ANTHROPIC_RULES[4]!.rejected } as AnthropicBody)
        .finalMessage(),
    );
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
  });

  it('count_tokens applies the same rules', async () => {
    const bad = ANTHROPIC_RULES[0]!.rejected;
    const error = await captureError(
      anthropic.messages.countTokens({ model: 'claude-haiku-4-5', ...bad } as Anthropic.Messages.MessageCountTokensParams),
    );
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
  });
});

describe('OpenAI Chat Completions rules through the SDK', () => {
  for (const c of OPENAI_RULES) {
    it(c.rule, async () => {
      const accepted = await openai.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 200, ...c.accepted } as OpenAIBody);
      expect(accepted.object).toBe('chat.completion');
      const error = await captureError(
        openai.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 200, ...c.rejected } as OpenAIBody),
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      const apiError = error as InstanceType<typeof OpenAI.BadRequestError>;
      expect(apiError.status).toBe(400);
      expect(apiError.type).toBe('invalid_request_error');
      expect(apiError.param).toBe(c.at);
      expect(apiError.error).toMatchObject({ message: expect.any(String), type: 'invalid_request_error', param: c.at, code: null });
      expect(sim.control.callLog()).toHaveLength(1);
    });
  }

  it('a streamed request is refused before any chunk, the same way', async () => {
    const c = OPENAI_RULES[2]!;
    const error = await captureError(
      openai.chat.completions.create({
        model: 'gpt-4o-mini',
        stream: true,
        ...c.rejected,
      } as OpenAI.Chat.ChatCompletionCreateParamsStreaming),
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(c.at);
  });
});
