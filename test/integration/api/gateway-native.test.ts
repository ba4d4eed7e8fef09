import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  AGENT_SYSTEM,
  type AgentTurn,
  ANTHROPIC_AGENT_TOOLS,
  buildLogStep,
  RESPONSES_AGENT_TOOLS,
  withLastBlockBreakpoint,
} from '../../../harness/gateway-agent.js';
import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * Strategy auto through the gateway (SPEC §5.10): an agent whose history passes the trigger
 * but still fits its window gets the provider's own compaction in the background, made with
 * its own system prompt and tools so the call reads the prefix the agent's requests cached;
 * the agent's next request opens with the provider's block and the beta header, and the
 * provider accepts it. The same for an agent on the Responses API: OpenAI's `/responses/compact`
 * with the agent's instructions and tools, its opaque item opening the next request's input.
 */

let sim: TestLlmSim;
let stack: Stack;
let base: string;
const MODEL = 'claude-sonnet-4-5';

beforeAll(async () => {
  sim = await startTestLlmSim({ keepBodies: 1000 });
  stack = await createStack({
    env: {
      ANTHROPIC_BASE_URL: sim.url,
      ANTHROPIC_API_KEY: 'sk-ant-configured',
      OPENAI_BASE_URL: sim.openaiBaseUrl,
      OPENAI_API_KEY: 'sk-openai-configured',
      // compactd's own summaries by the local summarizer: the sim's log holds the agent's calls and the provider compaction
      COMPACTD_SUMMARIZER: 'local',
    },
  });
  base = await stack.app.listen({ port: 0, host: '127.0.0.1' });
  sim.control.setProfile('instant');
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
});

type SimCall = ReturnType<TestLlmSim['control']['callLog']>[number];

/** The agent's turns, each followed by every compaction it started, until the sim has been asked for a provider compaction of this kind (at most 40). */
async function turnsUntilCompaction(
  id: string,
  turn: (i: number) => Promise<void>,
  kind: SimCall['compaction'],
): Promise<SimCall | undefined> {
  for (let i = 0; i < 40; i += 1) {
    await turn(i);
    const jobs = (await stack.app.inject({ method: 'GET', url: `/v1/conversations/${id}/jobs`, headers: stack.auth() })).json<{
      jobs: Array<{ id: string }>;
    }>().jobs;
    for (const job of jobs) await waitForJob(stack, job.id);
    const compaction = sim.control.callLog().find((call) => call.compaction === kind);
    if (compaction) return compaction;
  }
  return undefined;
}

describe('auto through the gateway', () => {
  it('compacts natively in the background, reading the agent’s cache, and the next request opens with the block', async () => {
    const id = 'gw-native';
    const created = await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: { id, model: MODEL, contextLimit: 12_000, policy: { keepRecent: 2, minMessages: 6, cooldownMessages: 2 } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const client = new Anthropic({
      apiKey: stack.key,
      baseURL: `${base}/gateway/anthropic`,
      maxRetries: 0,
      defaultHeaders: { 'x-compactd-conversation': id },
    });
    const history: AgentTurn[] = [];
    const turn = async (i: number) => {
      history.push({ role: 'user', content: [{ type: 'text', text: buildLogStep(i) }] });
      const answer = await client.messages.create({
        model: MODEL,
        max_tokens: 200,
        system: AGENT_SYSTEM,
        tools: ANTHROPIC_AGENT_TOOLS,
        messages: withLastBlockBreakpoint(history) as unknown as Anthropic.Messages.MessageParam[],
      });
      history.push({ role: 'assistant', content: answer.content.map((b) => ({ ...b })) as Array<Record<string, unknown>> });
    };
    const compaction = await turnsUntilCompaction(id, turn, 'summarize');
    expect(compaction, 'a provider compaction was asked for').toBeDefined();
    const jobs = (await stack.app.inject({ method: 'GET', url: `/v1/conversations/${id}/jobs`, headers: stack.auth() })).json<{
      jobs: Array<{ id: string; status: string; result: { strategy: string; decision: { strategy: string; reason: string } } }>;
    }>().jobs;
    const done = jobs.find((job) => job.result?.strategy === 'native');
    expect(done?.result.decision.reason, JSON.stringify(jobs)).toMatch(/in the background/);
    // the compaction sent the agent's own prefix: its input was read from the cache the agent's requests wrote
    const usage = compaction!.usage;
    expect(usage.cacheRead / (usage.input + usage.cacheRead + usage.cacheWrite)).toBeGreaterThanOrEqual(0.9);

    await turn(100);
    const last = sim.control.callLog().at(-1)!;
    expect(last.outcome).toBe('ok');
    const body = last.body as { messages: AgentTurn[] };
    expect(body.messages[0]?.content[0]?.['type']).toBe('compaction');
    expect(last.headers?.['anthropic-beta']).toContain('compact-2026-09-04');
  });
});

describe('auto through the gateway’s Responses route', () => {
  it('compacts with /responses/compact on the agent’s instructions and tools, and the next request sends the opaque item', async () => {
    const id = 'gw-native-responses';
    const model = 'gpt-4o-mini';
    const created = await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: { id, model, contextLimit: 12_000, policy: { keepRecent: 2, minMessages: 6, cooldownMessages: 2 } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const client = new OpenAI({
      apiKey: stack.key,
      baseURL: `${base}/gateway/openai/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-compactd-conversation': id },
    });
    const input: OpenAI.Responses.ResponseInputItem[] = [];
    const turn = async (i: number) => {
      input.push({ role: 'user', content: buildLogStep(i) });
      const answer = await client.responses.create({ model, instructions: AGENT_SYSTEM, tools: RESPONSES_AGENT_TOOLS, input });
      input.push({ role: 'assistant', content: answer.output_text });
    };
    const compaction = await turnsUntilCompaction(id, turn, 'responses_compact');
    expect(compaction, 'OpenAI’s compaction was asked for').toBeDefined();
    // the agent's own prefix: its instructions and tools as the agent sends them
    const asked = compaction!.body as { instructions?: string; tools?: unknown[] };
    expect(asked.instructions).toBe(AGENT_SYSTEM);
    expect(asked.tools).toHaveLength(1);
    const jobs = (await stack.app.inject({ method: 'GET', url: `/v1/conversations/${id}/jobs`, headers: stack.auth() })).json<{
      jobs: Array<{ result: { strategy: string; decision: { reason: string } } }>;
    }>().jobs;
    expect(jobs.find((job) => job.result?.strategy === 'native')?.result.decision.reason, JSON.stringify(jobs)).toMatch(/openai/);

    await turn(100);
    const last = sim.control.callLog().at(-1)!;
    expect(last.outcome).toBe('ok');
    const sent = (last.body as { input: Array<Record<string, unknown>> }).input;
    const items = sent.filter((item) => item['type'] === 'compaction');
    expect(items, JSON.stringify(sent).slice(0, 2_000)).toHaveLength(1);
    expect(typeof items[0]?.['encrypted_content']).toBe('string');
  });
});
