import { ChatAnthropic } from '@langchain/anthropic';
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { createClient } from 'compactd/client';
import { compactdMiddleware } from 'compactd/langchain';
import { createAgent } from 'langchain';
import { describe, expect, it } from 'vitest';

import { AGENT_POLICY, agentTurn, type SimBody, systemText, useAdapterStack } from '../../helpers/adapter-turns.js';
import { expectValidToolPairing } from '../../helpers/conversation.js';

/** compactd/langchain inside a real `createAgent` run, ChatAnthropic pointed at llm-sim (which validates every request). */

const env = useAdapterStack();

/** The history as an app that keeps its own copy hands it back: new objects, no ids, no usage. */
function ownCopy(messages: BaseMessage[]): BaseMessage[] {
  return messages.map((m) => {
    if (ToolMessage.isInstance(m)) return new ToolMessage({ tool_call_id: m.tool_call_id, content: m.content });
    if (AIMessage.isInstance(m)) return new AIMessage({ content: m.content, tool_calls: m.tool_calls ?? [] });
    return new HumanMessage({ content: m.content });
  });
}

type Invoke = (input: { messages: BaseMessage[] }, config: { configurable: { thread_id: string } }) => Promise<{ messages: BaseMessage[] }>;

function agentWith(middleware: ReturnType<typeof compactdMiddleware>, baseUrl: string): { invoke: Invoke } {
  const model = new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sim', anthropicApiUrl: baseUrl, maxRetries: 0, maxTokens: 256 });
  // createAgent's generics infer the agent state from every middleware; a narrow view keeps the type-check fast.
  return (createAgent as unknown as (p: object) => { invoke: Invoke })({
    model,
    tools: [],
    systemPrompt: 'You are a careful coding agent.',
    middleware: [middleware],
  });
}

describe('compactd/langchain middleware', () => {
  it('stores every message once, sends compactd’s context, and lets compactd compact on its own', async () => {
    env.sim.control.reset();
    const jobs: string[] = [];
    const errors: unknown[] = [];
    const middleware = compactdMiddleware({
      client: env.compactd,
      model: 'claude-sonnet-4-5',
      contextLimit: 4096,
      policy: AGENT_POLICY,
      onCompaction: (job) => jobs.push(job.id),
      onError: (error) => errors.push(error),
    });
    const agent = agentWith(middleware, env.sim.url);
    const config = { configurable: { thread_id: 'lc-thread' } };

    // A history that already holds a tool exchange, the way an app resumes one.
    let messages: BaseMessage[] = [
      new HumanMessage('List the failing tests.'),
      new AIMessage({
        content: 'Running the suite.',
        tool_calls: [{ id: 'toolu_01', name: 'run_tests', args: { path: 'src' }, type: 'tool_call' }],
      }),
      new ToolMessage({ tool_call_id: 'toolu_01', content: 'FAIL src/cache/lru.test.ts: expected 3 to be 2' }),
    ];
    let turn = 0;
    while (jobs.length === 0 && turn < 30) {
      const state = await agent.invoke({ messages: [...messages, new HumanMessage(agentTurn(turn++))] }, config);
      // every other turn the history comes back as the app's own copy: still stored once
      messages = turn % 2 === 0 ? ownCopy(state.messages) : state.messages;
    }
    expect(errors).toEqual([]);
    expect(jobs.length, 'compactd never started an auto compaction').toBeGreaterThan(0);
    const done = await env.compactd.waitForJob(jobs[0]!, { timeoutMs: 60_000 });
    expect(done.status, JSON.stringify(done.result)).toBe('completed');
    expect(done.trigger).toBe('auto');

    const state = await agent.invoke({ messages: [...messages, new HumanMessage('What is left to do?')] }, config);
    // the agent's own state keeps the whole history; the model got compactd's shorter context
    expect(state.messages.length).toBe(messages.length + 2);
    const calls = env.sim.control.callLog();
    expect(
      calls.every((c) => c.outcome === 'ok'),
      JSON.stringify(calls.filter((c) => c.outcome !== 'ok').map((c) => c.body)),
    ).toBe(true);
    const last = calls.at(-1)!.body as SimBody;
    expect(systemText(last)).toContain('You are a careful coding agent.');
    expect(systemText(last)).toContain('<compactd-archive');
    expect(last.messages.length).toBeLessThan(state.messages.length - 1);
    expect(last.messages.at(-1)).toMatchObject({ role: 'user' });
    expect(JSON.stringify(last.messages.at(-1))).toContain('What is left to do?');

    // every message stored once, in order: system, the seeded exchange, then user/assistant per turn
    const roles: string[] = [];
    for await (const line of env.compactd.exportConversation('lc-thread', { clipArchive: false })) roles.push(line.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'user', ...Array.from({ length: turn + 1 }, () => ['user', 'assistant']).flat()]);
    expectValidToolPairing(await env.compactd.getContext('lc-thread'), 'anthropic');
  });

  it('calls the model with the agent’s own history when compactd is unreachable, never an error in its place', async () => {
    env.sim.control.reset();
    const errors: unknown[] = [];
    const offline = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', retries: 0, timeoutMs: 2_000 });
    const agent = agentWith(
      compactdMiddleware({ client: offline, conversationId: 'lc-offline', onError: (e) => errors.push(e) }),
      env.sim.url,
    );
    const state = await agent.invoke({ messages: [new HumanMessage('Hello there.')] }, { configurable: { thread_id: 'ignored' } });
    expect(state.messages).toHaveLength(2);
    expect(errors.length).toBeGreaterThan(0);
    const body = env.sim.control.callLog().at(-1)!.body as SimBody;
    expect(systemText(body)).toBe('You are a careful coding agent.');
    expect(body.messages).toEqual([{ role: 'user', content: 'Hello there.' }]);
  });
});
