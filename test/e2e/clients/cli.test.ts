import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { type CompactdClient, createClient, type Job } from 'compactd/client';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { hasRealTranscripts, REAL_TRANSCRIPTS_DIR, SAMPLE_CLAUDE_CODE_SESSION } from '../../../harness/transcripts.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/** The client-side commands as a user runs them: `node bin/compactd.mjs …` against a listening service. */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

let sim: TestLlmSim;
let stack: Stack;
let url: string;
let client: CompactdClient;
beforeAll(async () => {
  sim = await startTestLlmSim();
  // local summarizer by default; `--provider anthropic` reaches llm-sim
  stack = await createStack({ env: { ANTHROPIC_BASE_URL: sim.url } });
  url = await stack.app.listen({ port: 0, host: '127.0.0.1' });
  client = createClient({ baseUrl: url, apiKey: stack.key });
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
});
beforeEach(() => sim.control.reset());

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with a clean key environment (a developer's own COMPACTD_* must not leak in). */
function cli(args: string[], env: Record<string, string> = {}, timeoutMs = 120_000): Promise<Run> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('COMPACTD_') && name !== 'DATABASE_URL'));
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin/compactd.mjs'), ...args], {
    cwd: repoRoot,
    env: { ...base, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`compactd ${args.join(' ')} did not finish within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const withService = () => ['--url', url, '--key', stack.key];

/** The demo prints `stored    conversation <id>: …`; the rest is checked through the API. */
function demoConversation(run: Run): string {
  const id = /conversation (demo-[\w.-]+):/.exec(run.stdout)?.[1];
  if (!id) throw new Error(`no conversation in demo output:\n${run.stdout}\n${run.stderr}`);
  return id;
}

/** The conversation's latest compaction (a follow-up consolidation aside). */
async function lastJob(id: string): Promise<Job> {
  const { jobs } = await client.listJobs(id, { limit: 10 });
  const job = jobs.find((j) => j.trigger !== 'consolidate');
  if (!job) throw new Error(`conversation ${id} has no compaction`);
  return job;
}

describe('compactd demo', () => {
  it('imports a real session, shows progress on stderr, and prints the numbers the job recorded', async () => {
    expect(hasRealTranscripts()).toBe(true);
    const run = await cli(['demo', '--yes', ...withService()]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl (a real Claude Code session');
    expect(run.stdout).toContain('143 messages, 88 tool calls');
    // not a terminal: progress degrades to plain lines
    expect(run.stderr).toMatch(/^appending 143\/143 messages \(100%\)$/m);
    expect(run.stderr).toMatch(/^compacting \d+\/\d+ chunks \(\d+%\) · (planning|summarizing|resummarizing|committing|completed)$/m);
    expect(run.stderr).not.toContain('\r');

    const id = demoConversation(run);
    const job = await lastJob(id);
    expect(job.status).toBe('completed');
    if (job.status !== 'completed') return;
    const n = (v: number) => v.toLocaleString('en-US');
    expect(run.stdout).toContain(`tokens: ${n(job.result.tokensBefore)} → ${n(job.result.tokensAfter)}`);
    expect(run.stdout).toContain(`messages archived: ${n(job.result.messagesArchived)} into ${job.result.batchIds.length} batch(es)`);
    const consolidated = job.result.consolidationJobId ? 1 : 0;
    expect(run.stdout).toContain(`batches   ${job.result.batchIds.length + consolidated}`);
    for (const batchId of job.result.batchIds) expect(run.stdout).toContain(batchId.slice(0, 8));
    const clip = (await client.listMessages(id, { limit: 1000 })).messages.find((m) => m.kind === 'clip_archive')!;
    const firstClipLine = String(clip.content[0]!['text']).split('\n')[0]!;
    expect(run.stdout).toContain(`clip-archive (seq ${clip.seq}`);
    expect(run.stdout).toContain(firstClipLine);
    expect(run.stdout).toMatch(/^total time [\d.]+ (ms|s)$/m);
  });

  it('summarizes through a provider (llm-sim) with --provider', async () => {
    const run = await cli(['demo', '--non-interactive', '--provider', 'anthropic', '--file', SAMPLE_CLAUDE_CODE_SESSION, ...withService()]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('(given)');
    const calls = sim.control.callLog().filter((c) => c.outcome === 'ok');
    expect(calls.length).toBeGreaterThan(0);
    const { batches } = await client.listBatches(demoConversation(run));
    expect(batches.length).toBeGreaterThan(0);
    expect(batches.every((b) => b.model.includes('claude-haiku-4-5'))).toBe(true);
    expect(run.stdout).toContain(`LLM: ${calls.length} call(s)`);
  });

  it('creates a key in the local database when none is given', async () => {
    const run = await cli(['demo', '--yes', '--url', url, '--file', SAMPLE_CLAUDE_CODE_SESSION], { DATABASE_URL: stack.db.url });
    expect(run.code, run.stderr).toBe(0);
    const prefix = /created (cpd_\S+)… for tenant "demo"/.exec(run.stderr)?.[1];
    expect(prefix).toBeDefined();
    const rows = await stack.db.db.execute<{ n: number }>(sql`
      select count(*)::int as n from api_keys k join tenants t on t.id = k.tenant_id where t.name = 'demo' and k.prefix = ${prefix!}`);
    expect(rows[0]?.n).toBe(1);
    // the demo's conversation belongs to that tenant, not to the test key's
    await expect(client.getConversation(demoConversation(run))).rejects.toMatchObject({ status: 404 });
  });

  it('says how to start the service when nothing listens at --url', async () => {
    const run = await cli(['demo', '--yes', '--url', 'http://127.0.0.1:9', '--key', 'k']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('CONNECTION_FAILED');
    expect(run.stderr).toContain('is compactd running at http://127.0.0.1:9?');
  });
});

describe('compactd import and compact', () => {
  it('imports a transcript once, however often it runs, then compacts it with progress', async () => {
    const first = await cli(['import', SAMPLE_CLAUDE_CODE_SESSION, '--conversation', 'cli-import', '--no-auto', ...withService()]);
    expect(first.code, first.stderr).toBe(0);
    // The session's own model, and so its window, not the service's 128k default.
    expect(first.stdout).toMatch(
      /^created cli-import: 22 messages \(9 tool pairs\), claude-opus-4-6, 200,000-token window, [\d,]+ active tokens \(\d+%\)$/m,
    );
    expect(first.stderr).toContain('claude-code, 1 conversation(s)');
    const again = await cli(['import', SAMPLE_CLAUDE_CODE_SESSION, '--conversation', 'cli-import', '--no-auto', ...withService()]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('cli-import: already imported (22 messages); nothing appended');
    const conversation = await client.getConversation('cli-import');
    expect(conversation).toMatchObject({ messageCount: 22, model: 'claude-opus-4-6', contextLimit: 200_000, policy: { auto: false } });

    // Other options would give other messages next to the ones there: refused before anything is sent.
    const otherOptions = await cli(['import', SAMPLE_CLAUDE_CODE_SESSION, '--conversation', 'cli-import', ...withService()]);
    expect(otherOptions.code).toBe(1);
    expect(otherOptions.stderr).toContain(
      'IMPORT_CONFLICT: conversation cli-import already holds claude-code-session.jsonl imported with other options',
    );
    expect((await client.getConversation('cli-import')).messageCount).toBe(22);

    const run = await cli([
      'compact',
      'cli-import',
      '--strategy',
      'summarize',
      '--keep-recent',
      '4',
      '--focus',
      'the failing test',
      ...withService(),
    ]);
    expect(run.code, run.stderr).toBe(0);
    const job = await lastJob('cli-import');
    expect(job).toMatchObject({ status: 'completed', options: { strategy: 'summarize', keepRecent: 4, focus: 'the failing test' } });
    expect(run.stderr).toContain(`enqueued: job ${job.id}`);
    expect(run.stderr).toMatch(/^compacting cli-import completed \([\d.]+ (ms|s)\)$/m);
    expect(run.stdout).toContain(`job ${job.id}: completed in`);

    const json = await cli(['compact', 'cli-import', '--strategy', 'summarize', '--keep-recent', '2', '--json', ...withService()]);
    const printed = JSON.parse(json.stdout) as Job;
    expect(printed.id).toBe((await lastJob('cli-import')).id);
    expect(['completed', 'noop']).toContain(printed.status);
  });

  it('imports the same file into another conversation, with --model, and starts no compaction unless --compact', async () => {
    // 124 messages, ~150k tokens: far past 80% of a 100k window, where an ordinary append compacts.
    const session = path.join(REAL_TRANSCRIPTS_DIR, 'raw/spotter-claude-code/4d5611e5-241a-462a-8d15-5122611a9569.jsonl');
    const quiet = await cli(['import', session, '--conversation', 'cli-import-quiet', '--context-limit', '100000', ...withService()]);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout).toMatch(/^created cli-import-quiet: 124 messages .*claude-opus-4-6, 100,000-token window/m);
    expect(quiet.stdout).not.toContain('triggered compaction');
    expect(quiet.stdout).toContain('past the warning ratio');
    expect((await client.getConversation('cli-import-quiet')).lastJob).toBeNull();

    const eager = await cli([
      'import',
      session,
      '--conversation',
      'cli-import-eager',
      '--context-limit',
      '100000',
      '--compact',
      ...withService(),
    ]);
    expect(eager.code, eager.stderr).toBe(0);
    expect(eager.stdout).toContain('the append triggered compaction job');
    expect((await client.getConversation('cli-import-eager')).lastJob).not.toBeNull();

    // The same file into a third conversation, on another model: its own keys, no IDEMPOTENCY_KEY_REUSED.
    const sonnet = await cli([
      'import',
      SAMPLE_CLAUDE_CODE_SESSION,
      '--conversation',
      'cli-import-sonnet',
      '--model',
      'claude-sonnet-4-5',
      ...withService(),
    ]);
    expect(sonnet.code, sonnet.stderr).toBe(0);
    expect(await client.getConversation('cli-import-sonnet')).toMatchObject({ model: 'claude-sonnet-4-5', messageCount: 22 });
  });

  it('links a Claude Code sub-agent’s transcript to the session that started it, once that session is imported', async () => {
    // a sub-agent's file: every line a sidechain, with its agentId and the parent's sessionId
    const lines = readFileSync(SAMPLE_CLAUDE_CODE_SESSION, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const parentSession = String(lines.find((l) => typeof l['sessionId'] === 'string')?.['sessionId']);
    const sidechain = lines
      .filter((l) => l['type'] === 'user' || l['type'] === 'assistant')
      .slice(0, 6)
      .map((l) => JSON.stringify({ ...l, isSidechain: true, agentId: 'a7f3c2e1' }))
      .join('\n');
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'compactd-subagent-')), 'agent-a7f3c2e1.jsonl');
    writeFileSync(file, `${sidechain}\n`);

    const parent = await cli(['import', SAMPLE_CLAUDE_CODE_SESSION, '--no-auto', ...withService()]);
    expect(parent.code, parent.stderr).toBe(0);
    const child = await cli(['import', file, '--no-auto', ...withService()]);
    expect(child.code, child.stderr).toBe(0);
    const agentConversation = `${parentSession}-agent-a7f3c2e1`;
    expect(child.stdout).toContain(`created ${agentConversation}`);
    const listed = await fetch(`${url}/v1/conversations?parentId=${encodeURIComponent(parentSession)}`, {
      headers: { authorization: `Bearer ${stack.key}` },
    });
    const children = ((await listed.json()) as { conversations: Array<{ id: string; parentId: string | null }> }).conversations;
    expect(children).toEqual([expect.objectContaining({ id: agentConversation, parentId: parentSession })]);
  });

  it('reads its own export back: the same messages, metadata and pins, without the clip-archive', async () => {
    expect((await cli(['import', SAMPLE_CLAUDE_CODE_SESSION, '--conversation', 'cli-export-a', '--no-auto', ...withService()])).code).toBe(
      0,
    );
    const pin = await fetch(`${url}/v1/conversations/cli-export-a/messages/2/pin`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${stack.key}` },
    });
    expect(pin.status, await pin.text()).toBeLessThan(300);
    const compacted = await cli(['compact', 'cli-export-a', '--strategy', 'summarize', '--keep-recent', '4', ...withService()]);
    expect(compacted.code, compacted.stderr).toBe(0);
    const exportOf = async (id: string) =>
      (await (await fetch(`${url}/v1/conversations/${id}/export`, { headers: { authorization: `Bearer ${stack.key}` } })).text())
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const exported = await exportOf('cli-export-a');
    expect(exported.some((line) => line['kind'] === 'clip_archive')).toBe(true);
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'compactd-export-')), 'cli-export-a.jsonl');
    writeFileSync(file, `${exported.map((line) => JSON.stringify(line)).join('\n')}\n`);

    const reimported = await cli(['import', file, '--conversation', 'cli-export-b', '--no-auto', ...withService()]);
    expect(reimported.code, reimported.stderr).toBe(0);
    expect(reimported.stderr).toContain('compactd-export, 1 conversation(s)');
    const shape = (lines: Array<Record<string, unknown>>) =>
      lines
        .filter((line) => line['kind'] === 'message')
        .map(({ role, content, metadata, pinned, name }) => ({ role, content, metadata, pinned, name }));
    const again = await exportOf('cli-export-b');
    expect(shape(again)).toEqual(shape(exported));
    expect(again.some((line) => line['pinned'] === true)).toBe(true);
  });

  it('deletes the conversation it created when an append fails, leaving nothing half-made', async () => {
    // 500 messages go in the first batch; the second holds one message over the service's 2 MiB limit.
    const messages: Array<{ role: string; content: string }> = Array.from({ length: 500 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `message ${i}`,
    }));
    messages.push({ role: 'user', content: 'x'.repeat(3 * 1024 * 1024) });
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'compactd-import-')), 'too-big.json');
    writeFileSync(file, JSON.stringify({ messages }));
    const run = await cli(['import', file, '--conversation', 'cli-import-fails', ...withService()]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('MESSAGE_TOO_LARGE');
    expect(run.stderr).toContain('the conversation cli-import-fails it had created was deleted again, nothing is left behind');
    await expect(client.getConversation('cli-import-fails')).rejects.toMatchObject({ status: 404 });
  });

  it('reports the service’s problem, a refused key and bad options with distinct exit codes', async () => {
    const missing = await cli(['compact', 'no-such-conversation', ...withService()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('CONVERSATION_NOT_FOUND (404)');

    const refused = await cli(['compact', 'cli-import', '--url', url, '--key', 'cpd_wrong']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('UNAUTHORIZED (401)');
    expect(refused.stderr).toContain('the key from --key was refused');

    const badRatio = await cli(['compact', 'cli-import', '--target-ratio', '2', ...withService()]);
    expect(badRatio.code).toBe(2);
    expect(badRatio.stderr).toContain('--target-ratio: invalid value "2"');

    const badFormat = await cli(['import', SAMPLE_CLAUDE_CODE_SESSION, '--format', 'yaml']);
    expect(badFormat.code).toBe(2);
    const noFile = await cli(['import', path.join(repoRoot, 'no-such-file.jsonl'), ...withService()]);
    expect(noFile.code).toBe(1);
    expect(noFile.stderr).toContain('no such file');
  });

  it('lists the client commands in the usage', async () => {
    const run = await cli(['help']);
    expect(run.code).toBe(0);
    for (const command of ['demo', 'import FILE', 'compact ID']) expect(run.stdout).toContain(`  ${command}`);
  });
});
