import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, type ModelMessage } from 'ai';
import { compactdSession } from 'compactd/ai-sdk';
import { createClient } from 'compactd/client';
import { describe, expect, it } from 'vitest';

import { AGENT_POLICY, agentTurn, type SimBody, systemText, useAdapterStack } from '../../helpers/adapter-turns.js';
import { expectValidToolPairing } from '../../helpers/conversation.js';

/** compactd/ai-sdk inside real `generateText` calls, @ai-sdk/anthropic pointed at llm-sim (which validates every request). */

const env = useAdapterStack();

const SYSTEM = 'You are a careful coding agent.';

describe('compactd/ai-sdk session', () => {
  it('stores every message once, sends compactd’s context, and lets compactd compact on its own', async () => {
    env.sim.control.reset();
    const anthropic = createAnthropic({ baseURL: `${env.sim.url}/v1`, apiKey: 'sim' });
    const jobs: string[] = [];
    const errors: unknown[] = [];
    const session = compactdSession({
      client: env.compactd,
      conversationId: 'ai-sdk-run',
      system: SYSTEM,
      model: 'claude-sonnet-4-5',
      contextLimit: 4096,
      policy: AGENT_POLICY,
      onCompaction: (job) => jobs.push(job.id),
      onError: (error) => errors.push(error),
    });
    const call = (messages: ModelMessage[]) =>
      generateText({
        model: anthropic('claude-sonnet-4-5'),
        system: SYSTEM,
        messages,
        maxOutputTokens: 256,
        maxRetries: 0,
        prepareStep: session.prepareStep,
        onStepFinish: session.onStepFinish,
      });

    // A history that already holds a tool exchange, the way an app resumes one.
    const messages: ModelMessage[] = [
      { role: 'user', content: 'List the failing tests.' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Running the suite.' },
          { type: 'tool-call', toolCallId: 'toolu_01', toolName: 'run_tests', input: { path: 'src' } },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'toolu_01',
            toolName: 'run_tests',
            output: { type: 'text', value: 'FAIL src/cache/lru.test.ts: expected 3 to be 2' },
          },
        ],
      },
    ];
    let turn = 0;
    while (jobs.length === 0 && turn < 30) {
      messages.push({ role: 'user', content: agentTurn(turn++) });
      const result = await call(messages);
      expect(result.text).not.toBe('');
      messages.push(...result.response.messages);
    }
    expect(errors).toEqual([]);
    expect(jobs.length, 'compactd never started an auto compaction').toBeGreaterThan(0);
    const done = await env.compactd.waitForJob(jobs[0]!, { timeoutMs: 60_000 });
    expect(done.status, JSON.stringify(done.result)).toBe('completed');

    messages.push({ role: 'user', content: 'What is left to do?' });
    await call(messages);
    const calls = env.sim.control.callLog();
    expect(
      calls.every((c) => c.outcome === 'ok'),
      JSON.stringify(calls.filter((c) => c.outcome !== 'ok').map((c) => c.body)),
    ).toBe(true);
    const last = calls.at(-1)!.body as SimBody;
    expect(systemText(last)).toContain(SYSTEM);
    expect(systemText(last)).toContain('<compactd-archive');
    expect(last.messages.length).toBeLessThan(messages.length);
    expect(JSON.stringify(last.messages.at(-1))).toContain('What is left to do?');

    const roles: string[] = [];
    for await (const line of env.compactd.exportConversation('ai-sdk-run', { clipArchive: false })) roles.push(line.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'user', ...Array.from({ length: turn + 1 }, () => ['user', 'assistant']).flat()]);
    expectValidToolPairing(await env.compactd.getContext('ai-sdk-run'), 'anthropic');
  });

  it('goes ahead with the SDK’s own messages when compactd is unreachable', async () => {
    env.sim.control.reset();
    const anthropic = createAnthropic({ baseURL: `${env.sim.url}/v1`, apiKey: 'sim' });
    const errors: unknown[] = [];
    const offline = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', retries: 0, timeoutMs: 2_000 });
    const session = compactdSession({ client: offline, conversationId: 'ai-sdk-offline', system: SYSTEM, onError: (e) => errors.push(e) });
    const result = await generateText({
      model: anthropic('claude-sonnet-4-5'),
      system: SYSTEM,
      prompt: 'Hello there.',
      maxRetries: 0,
      prepareStep: session.prepareStep,
      onStepFinish: session.onStepFinish,
    });
    expect(result.text).not.toBe('');
    expect(errors.length).toBeGreaterThan(0);
    const body = env.sim.control.callLog().at(-1)!.body as SimBody;
    expect(systemText(body)).toBe(SYSTEM);
    expect(JSON.stringify(body.messages)).toContain('Hello there.');
  });
});
