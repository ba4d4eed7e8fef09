import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import Anthropic from '@anthropic-ai/sdk';
import { type CompactdClient, createClient } from 'compactd/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createAgent, startConversation } from '../../../examples/agent-loop.js';
import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { expectValidToolPairing } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/** examples/agent-loop.ts against a listening compactd, with llm-sim as the agent's model. */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

let sim: TestLlmSim;
let stack: Stack;
let url: string;
let compactd: CompactdClient;
beforeAll(async () => {
  sim = await startTestLlmSim();
  stack = await createStack();
  url = await stack.app.listen({ port: 0, host: '127.0.0.1' });
  compactd = createClient({ baseUrl: url, apiKey: stack.key });
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
});

function runExample(turns: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'examples/agent-loop.ts'), ...turns], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

interface SimBody {
  system?: string;
  messages: Array<{ role: string; content: unknown }>;
  tools?: Array<{ name: string }>;
}

describe('examples/agent-loop.ts', () => {
  it('runs turns through the model with the context from compactd, and compacts on /compact', async () => {
    sim.control.reset();
    const questions = [
      'Find the flaky test in src/cache/lru.test.ts; it fails about one run in ten.',
      'Run it 50 times and tell me the failure rate.',
      'The failure is "expected 3 to be 2" at lru.test.ts:88. Why?',
      'Is the eviction order in src/cache/lru.ts wrong?',
      'Propose a fix that keeps the public API.',
      'Write the fix and a regression test.',
      'Does the fix change the benchmark in bench/cache.bench.ts?',
      'Summarize what we changed.',
    ];
    const turns = [...questions, '/compact keep the failure message and the fix', 'What is left to do?'];
    const run = await runExample(turns, {
      COMPACTD_URL: url,
      COMPACTD_API_KEY: stack.key,
      ANTHROPIC_BASE_URL: sim.url,
      ANTHROPIC_API_KEY: 'sim',
      AGENT_CONVERSATION: 'agent-run',
      AGENT_POLICY: JSON.stringify({ auto: false, keepRecent: 4 }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('conversation agent-run');
    for (const turn of turns) expect(run.stdout).toContain(`> ${turn}\n`);
    expect(run.stdout).toMatch(/compacted: \d+ → \d+ tokens, \d+ messages archived/);

    const calls = sim.control.callLog();
    expect(calls.map((c) => c.outcome)).toEqual(Array(questions.length + 1).fill('ok'));
    const bodies = calls.map((c) => c.body as SimBody);
    for (const body of bodies) {
      expect(body.tools?.map((t) => t.name)).toEqual(['compact']);
      expect(body.system).toContain('You are a careful coding agent.');
    }
    // before compaction every call carries the whole history: user/assistant pairs plus the new question
    bodies.slice(0, questions.length).forEach((body, i) => expect(body.messages).toHaveLength(2 * i + 1));
    // after it, the clip-archive arrives in the system prompt and the history is shorter
    const last = bodies.at(-1)!;
    expect(last.system).toContain('<compactd-archive');
    expect(last.messages.length).toBeLessThan(2 * questions.length + 1);
    expect(last.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'What is left to do?' }] });

    const conversation = await compactd.getConversation('agent-run');
    expect(conversation.compactionCount).toBe(1);
    expect(conversation.lastJob?.status).toBe('completed');
    const [job] = (await compactd.listJobs('agent-run')).jobs;
    expect(job).toMatchObject({ trigger: 'api', options: { focus: 'keep the failure message and the fix' } });
    // every turn was stored: the export holds them all, archived or active, in order
    const roles: string[] = [];
    for await (const line of compactd.exportConversation('agent-run', { clipArchive: false })) roles.push(line.role);
    expect(roles).toEqual(['system', ...Array.from({ length: questions.length + 1 }, () => ['user', 'assistant']).flat()]);
    expectValidToolPairing(await compactd.getContext('agent-run'), 'anthropic');
  });

  it("answers the model's compact tool call: a refusal while small, then a tool-triggered job the next turn sees", async () => {
    sim.control.reset();
    const anthropic = new Anthropic({ apiKey: 'sim', baseURL: sim.url, maxRetries: 0 });
    const policy = { auto: false, keepRecent: 2, toolMinTokens: 300 };
    await startConversation(compactd, { id: 'agent-tool', system: 'You are a careful coding agent.', model: 'claude-opus-4-6', policy });
    const agent = await createAgent({ compactd, anthropic, conversationId: 'agent-tool', model: 'claude-opus-4-6' });

    // Each call exactly as the SDK hands a tool_use block to the loop.
    const refused = await agent.runTool({ id: 'toolu_01', name: 'compact', input: {} });
    expect(refused).toEqual({ content: expect.stringContaining('needs at least 300'), isError: true });

    const questions = [
      'List the files under src/cache.',
      'Which of them has no tests?',
      'Sketch tests for src/cache/lru.ts.',
      'Add a test for eviction under concurrent writes.',
      'Run the suite; does "expected 3 to be 2" still appear?',
      'Record the decision: keep the LRU map, drop the TTL wheel.',
    ];
    for (const question of questions) {
      expect(await agent.runTurn(question)).not.toBe('');
    }
    const accepted = await agent.runTool({ id: 'toolu_02', name: 'compact', input: { focus: 'the file list' } });
    expect(accepted.isError).toBe(false);
    const [job] = (await compactd.listJobs('agent-tool')).jobs;
    expect(job).toMatchObject({ trigger: 'tool', options: { focus: 'the file list' } });
    expect(accepted.content).toContain(job!.id);
    const finished = await compactd.waitForJob(job!.id, { timeoutMs: 30_000 });
    expect(finished.status, JSON.stringify(finished.result)).toBe('completed');

    await agent.runTurn('Go on.');
    const last = sim.control.callLog().at(-1)!.body as SimBody;
    expect(last.system).toContain('<compactd-archive');

    expect(await agent.runTool({ id: 'toolu_03', name: 'deploy', input: {} })).toEqual({ content: 'unknown tool deploy', isError: true });
  });
});
