import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { REAL_TRANSCRIPTS_DIR } from '../../../harness/transcripts.js';
import { waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * The real Claude Code CLI (pinned 2.1.328), unmodified, resumes a real long session through
 * the gateway twice. compactd compacts the session in the background after the first run;
 * the second run's request to the model carries the clip-archive and is at most half the size.
 */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLAUDE = path.join(repoRoot, 'node_modules/.bin/claude');
const SESSION_ID = '258c7280-ae70-4798-800f-63464d01a85d';
const SESSION_FILE = path.join(REAL_TRANSCRIPTS_DIR, 'raw/spotter-claude-code', `${SESSION_ID}.jsonl`);
const CONVERSATION = 'claude-code-spotter';

let sim: TestLlmSim;
let stack: Stack;
let base: string;
let home: string;
let workdir: string;

/**
 * The session up to its own compaction (Claude Code resumes from its last compact boundary):
 * the whole long history is what the CLI sends, ~118k tokens.
 */
function placeSession(): void {
  const lines = readFileSync(SESSION_FILE, 'utf8').split('\n');
  const boundary = lines.findIndex((line) => line.includes('"subtype":"compact_boundary"'));
  const projectDir = path.join(home, '.claude/projects', workdir.replace(/[/.]/g, '-'));
  mkdirSync(projectDir, { recursive: true });
  writeFileSync(path.join(projectDir, `${SESSION_ID}.jsonl`), `${lines.slice(0, boundary === -1 ? lines.length : boundary).join('\n')}\n`);
}

function runClaude(prompt: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(CLAUDE, ['-p', '--model', 'claude-haiku-4-5', '--resume', SESSION_ID, prompt], {
    cwd: workdir,
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: home,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      ANTHROPIC_BASE_URL: `${base}/gateway/anthropic`,
      ANTHROPIC_API_KEY: stack.key,
      ANTHROPIC_CUSTOM_HEADERS: `x-compactd-conversation: ${CONVERSATION}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

type AgentBody = { system?: Array<{ text: string }>; messages: unknown[]; tools?: unknown[] };

/** The CLI's calls in llm-sim's log (the agent's model; summaries here are local). */
const agentCalls = () => sim.control.callLog().filter((call) => Array.isArray((call.body as AgentBody | undefined)?.tools));

beforeAll(async () => {
  sim = await startTestLlmSim({ keepBodies: 50 });
  stack = await createStack({ env: { ANTHROPIC_BASE_URL: sim.url, ANTHROPIC_API_KEY: 'sk-ant-configured', COMPACTD_SUMMARIZER: 'local' } });
  base = await stack.app.listen({ port: 0, host: '127.0.0.1' });
  home = mkdtempSync(path.join(tmpdir(), 'compactd-claude-home-'));
  workdir = mkdtempSync(path.join(tmpdir(), 'compactd-claude-work-'));
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
  for (const dir of [home, workdir]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!existsSync(SESSION_FILE) || !existsSync(CLAUDE))('Claude Code CLI through the gateway', () => {
  it('resumes a real long session twice; the second request carries the clip-archive and is at most half the first', async () => {
    placeSession();
    // the auto trigger below the session's size (~118k of haiku's 200k window)
    const created = await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: { id: CONVERSATION, model: 'claude-haiku-4-5', policy: { triggerRatio: 0.3, warnRatio: 0.25, targetRatio: 0.15 } },
    });
    expect(created.statusCode).toBe(201);

    const first = await runClaude('In one sentence: where are we with spotter-gqc?');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim().length).toBeGreaterThan(0);
    const [firstCall] = agentCalls();
    expect(firstCall?.status).toBe(200);

    // the first request's append started a compaction in the background; the CLI did not wait for it
    const jobs = (
      await stack.app.inject({ method: 'GET', url: `/v1/conversations/${CONVERSATION}/jobs`, headers: stack.auth() })
    ).json() as { jobs: Array<{ id: string; trigger: string }> };
    const auto = jobs.jobs.find((job) => job.trigger === 'auto');
    expect(auto, JSON.stringify(jobs)).toBeDefined();
    const done = await waitForJob(stack, auto!.id);
    expect(done.status, JSON.stringify(done.result ?? done.error)).toBe('completed');

    const second = await runClaude('And what is the next step?');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout.trim().length).toBeGreaterThan(0);
    const calls = agentCalls();
    expect(calls).toHaveLength(2);
    const secondCall = calls[1]!;
    const secondBody = secondCall.body as AgentBody;
    const system = (secondBody.system ?? []).map((block) => block.text).join('\n');
    expect(system).toContain('<compactd');
    expect((firstCall!.body as AgentBody).messages.length).toBeGreaterThan(secondBody.messages.length);
    expect(secondCall.inputTokens).toBeLessThanOrEqual(firstCall!.inputTokens / 2);
  });
});
