import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { waitFor } from '../../../harness/wait-for.js';
import { activeMessages, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * The real Codex CLI (pinned in package.json), unmodified, runs a session through the gateway's
 * Responses route (`wire_api = "responses"`, a custom model provider whose base URL is the
 * gateway), offline against llm-sim. Turn after turn (`codex exec`, then `codex exec resume
 * --last`) the history grows past the conversation's trigger; compactd compacts it in the
 * background, and the next turn's request reaches the model with the clip-archive in place of
 * the archived turns, which llm-sim accepts.
 */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CODEX = path.join(repoRoot, 'node_modules/.bin/codex');
const CONVERSATION = 'codex-session';
const MODEL = 'gpt-5-mini';

let sim: TestLlmSim;
let stack: Stack;
let base: string;
let home: string;
let workdir: string;

/** A custom model provider pointing at the gateway, the compactd key in an environment variable, as a user would set it up. */
function writeConfig(): void {
  writeFileSync(
    path.join(home, 'config.toml'),
    [
      `model = "${MODEL}"`,
      'model_provider = "compactd"',
      // the session stays under compactd's trigger only through compactd: Codex's own compaction never starts
      'model_auto_compact_token_limit = 1000000',
      // a hosted tool would be billed on the operator's key: the gateway refuses it without the tenant's leave
      'web_search = "disabled"',
      '[model_providers.compactd]',
      'name = "compactd"',
      `base_url = "${base}/gateway/openai/v1"`,
      'wire_api = "responses"',
      'env_key = "COMPACTD_API_KEY"',
      `http_headers = { "x-compactd-conversation" = "${CONVERSATION}" }`,
      '',
    ].join('\n'),
  );
}

function runCodex(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(CODEX, ['exec', '--skip-git-repo-check', ...args], {
    cwd: workdir,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, CODEX_HOME: home, COMPACTD_API_KEY: stack.key },
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

/** One turn of the session: a task with a long log pasted in, the history's bulk. */
const turn = (step: number) =>
  `Step ${step}: make src/feature${step}.test.ts pass. ${'The log says: expected 3 to equal 4 at src/feature.ts:12. '.repeat(60)}`;

type Item = { type?: string; role?: string; content?: unknown };
type ResponsesBody = { input: Item[]; instructions?: string };
const responsesCalls = () => sim.control.callLog().filter((call) => call.endpoint === '/v1/responses');
const stepsIn = (body: ResponsesBody) =>
  body.input.filter((item) => item.role === 'user' && JSON.stringify(item.content).includes('make src/feature')).length;

async function jobsOf(id: string): Promise<Array<{ id: string; trigger: string; status: string }>> {
  const res = await stack.app.inject({ method: 'GET', url: `/v1/conversations/${id}/jobs`, headers: stack.auth() });
  return (res.json() as { jobs: Array<{ id: string; trigger: string; status: string }> }).jobs;
}

beforeAll(async () => {
  sim = await startTestLlmSim({ keepBodies: 100 });
  stack = await createStack({
    env: { OPENAI_BASE_URL: sim.openaiBaseUrl, OPENAI_API_KEY: 'sk-openai-configured', COMPACTD_SUMMARIZER: 'local' },
  });
  base = await stack.app.listen({ port: 0, host: '127.0.0.1' });
  home = mkdtempSync(path.join(tmpdir(), 'compactd-codex-home-'));
  workdir = mkdtempSync(path.join(tmpdir(), 'compactd-codex-work-'));
  writeConfig();
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
  for (const dir of [home, workdir]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!existsSync(CODEX))('Codex CLI through the gateway (Responses API)', () => {
  it('runs turns until compactd compacts; the next turn sends the clip-archive and the provider accepts it', async () => {
    // a small window, so a few turns of pasted logs go over the auto trigger
    const created = await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: {
        id: CONVERSATION,
        model: MODEL,
        contextLimit: 12_000,
        policy: { triggerRatio: 0.5, warnRatio: 0.4, targetRatio: 0.2, keepRecent: 2, minMessages: 4 },
      },
    });
    expect(created.statusCode, created.body).toBe(201);

    let steps = 0;
    let compaction: { id: string } | undefined;
    while (compaction === undefined && steps < 8) {
      const run = await runCodex(steps === 0 ? [turn(steps)] : ['resume', '--last', turn(steps)]);
      steps += 1;
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout.trim().length).toBeGreaterThan(0);
      compaction = (await jobsOf(CONVERSATION)).find((job) => job.trigger === 'auto');
    }
    expect(compaction, 'no compaction after 8 turns').toBeDefined();
    const done = await waitForJob(stack, compaction!.id);
    expect(done.status, JSON.stringify(done.result ?? done.error)).toBe('completed');

    // every turn so far went upstream as Codex sent it (nothing was compacted yet), and was accepted
    const before = responsesCalls();
    expect(before).toHaveLength(steps);
    expect(before.every((call) => call.status === 200)).toBe(true);
    expect(stepsIn(before.at(-1)!.body as ResponsesBody)).toBe(steps);

    const last = await runCodex(['resume', '--last', 'What is left to do? Answer in one line.']);
    expect(last.code, last.stderr).toBe(0);
    const after = responsesCalls();
    expect(after).toHaveLength(steps + 1);
    const sent = after.at(-1)!;
    // the provider took the compacted context (llm-sim validates every item it gets)
    expect(sent.status).toBe(200);
    const body = sent.body as ResponsesBody;
    const archive = body.input.find((item) => item.role === 'developer' && JSON.stringify(item.content).includes('<compactd'));
    expect(archive, 'the clip-archive goes upstream as a developer message').toBeDefined();
    expect(stepsIn(body)).toBeLessThan(steps);
    // Codex's own instructions and its first developer messages stay first, as it sent them
    expect(JSON.stringify(body.input[0])).toBe(JSON.stringify((before[0]!.body as ResponsesBody).input[0]));

    // the stored conversation: the clip-archive, the kept turns and the new turn with its answer
    // the answer is stored once relayed
    let stored: Awaited<ReturnType<typeof activeMessages>> = [];
    await waitFor(
      async () => (stored = await activeMessages(stack, CONVERSATION)).at(-1)?.role === 'assistant',
      10_000,
      25,
      'the last answer stored',
    );
    expect(stored.some((message) => message.kind === 'clip_archive')).toBe(true);
    expect(stored.at(-1)?.role).toBe('assistant');
    expect(JSON.stringify(stored.at(-2)?.content)).toContain('What is left to do?');
  });
});
