import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/** The framework examples, each run with one command as the README shows, against a listening compactd and llm-sim. */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

let sim: TestLlmSim;
let stack: Stack;
let url: string;
beforeAll(async () => {
  sim = await startTestLlmSim();
  stack = await createStack();
  url = await stack.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
});

function runExample(file: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'examples', file)], {
    cwd: repoRoot,
    env: { ...process.env, COMPACTD_URL: url, COMPACTD_BOOTSTRAP_KEY: stack.key, ANTHROPIC_BASE_URL: sim.url, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

describe('framework examples', () => {
  it.each([
    ['langchain-agent.ts', 'ex-langchain'],
    ['ai-sdk-agent.ts', 'ex-ai-sdk'],
  ])('%s runs its turns, and compactd compacts along the way', async (file, conversation) => {
    sim.control.reset();
    const run = await runExample(file, { AGENT_CONVERSATION: conversation });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`conversation ${conversation}`);
    expect(run.stdout).toContain('turn 8:');
    expect(run.stdout).toMatch(/compactd started compaction \S+ \(auto\)/);
    expect(run.stderr).not.toContain('compactd unreachable');
    expect(sim.control.callLog().every((c) => c.outcome === 'ok')).toBe(true);
  });

  it('mcp-client.ts lists the tools, compacts through them and recalls an archived detail', async () => {
    const run = await runExample('mcp-client.ts', { AGENT_CONVERSATION: 'ex-mcp' });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('tools: compact, recall, job_status');
    expect(run.stdout).toMatch(/job \S+: completed \(\d+ → \d+ tokens\)/);
    // recall answers as text: the hits' seq, role, tool and batch, then their matching lines
    expect(run.stdout).toMatch(/archived messages? match/);
    expect(run.stdout).toMatch(/seq \d+ · \w+ · tool \S+ · batch \S+/);
    expect(run.stdout).toMatch(/>.*ECONNRESET/);
  });
});
