import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { importTranscript } from '../../../src/importers/index.js';
import { validateAnthropicRequest } from '../../../src/llm-sim/validate-anthropic.js';
import { validateOpenAIRequest } from '../../../src/llm-sim/validate-openai.js';
import { compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * An OpenHands run compacted under every strategy keeps its task statement — the whole
 * first user message, ~5k characters with its example and its last line — verbatim in the
 * context (a request the provider accepts), because the environment events after it (recall, an error answering no call)
 * are no user requests; and the local summarizer never reports such an event as the
 * request. The run is the hand-made fixture in the event format's documented shape.
 */
const fixture = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/transcripts/openhands-codeact-output.json');
const text = readFileSync(fixture, 'utf8');
const { instruction } = JSON.parse(text) as { instruction: string };
const [run] = importTranscript(text).conversations;

let stack: Stack;
beforeAll(async () => {
  stack = await createStack();
});
afterAll(async () => {
  await stack?.close();
});

type ContextMessage = { role: string; content: string | null | Array<Record<string, unknown>> };

function textsOf(message: ContextMessage): string[] {
  if (typeof message.content === 'string') return [message.content];
  return (message.content ?? []).flatMap((b) => (b['type'] === 'text' && typeof b['text'] === 'string' ? [b['text']] : []));
}

describe('an OpenHands run keeps its task statement through a compaction', () => {
  it.each(['auto', 'summarize', 'mask', 'reset'] as const)('%s', async (strategy) => {
    const id = `openhands-${strategy}`;
    // a short tail, so the compaction has the run's exchanges to work on
    await seedConversation(stack, id, run!.messages, { policy: { auto: false, keepRecent: 2 } });
    const job = await waitForJob(stack, (await compact(stack, id, { strategy })).id);
    expect(['completed', 'noop'], JSON.stringify(job.error)).toContain(job.status);
    if (strategy !== 'mask') expect(job.status).toBe('completed');
    for (const format of ['anthropic', 'openai'] as const) {
      const res = await stack.app.inject({ method: 'GET', url: `/v1/conversations/${id}/context?format=${format}`, headers: stack.auth() });
      const context = res.json() as { messages: ContextMessage[] };
      const validate = format === 'anthropic' ? validateAnthropicRequest : validateOpenAIRequest;
      expect(validate(context), `${format} context after ${strategy}`).toBeNull();
      const userTexts = context.messages.filter((m) => m.role === 'user').flatMap(textsOf);
      expect(userTexts, `${format} context after ${strategy}`).toContain(instruction);
    }
    // no summary calls an environment event the user's request
    const batches = await stack.app.inject({ method: 'GET', url: `/v1/conversations/${id}/batches`, headers: stack.auth() });
    const summaries = (batches.json() as { batches: Array<{ summary: string }> }).batches.map((b) => b.summary).join('\n');
    if (strategy !== 'mask') expect(summaries).toContain('## TASK STATE');
    const requestLines = summaries.split('\n').filter((line) => /(Latest|Earlier) request:/.test(line));
    for (const line of requestLines) expect(line).not.toMatch(/Parameter 'command'|Added workspace context|meta turn/);
  });
});
