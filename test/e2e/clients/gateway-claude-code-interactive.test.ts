import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { waitFor } from '../../../harness/wait-for.js';
import { historyKey, storableMessage } from '../../../src/api/gateway/history.js';
import { threadId } from '../../../src/api/gateway/identity.js';
import { readStoredKeys, type StoredKeys } from '../../../src/db/repos/gateway-history.js';
import type { CallRecord } from '../../../src/llm-sim/state.js';
import { waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * The real Claude Code CLI (pinned 2.1.328), unmodified and interactive, in a tmux terminal,
 * through the gateway to llm-sim: nothing but ANTHROPIC_BASE_URL points it at compactd. A
 * session of several turns (most paste long notes) passes its conversation's trigger, is
 * compacted in the background and goes on from the clip-archive; then a turn is rewound with
 * `/rewind` and edited, and the session goes on compacted. The session is stored whole in the
 * one conversation its metadata.user_id names; the session-title requests the CLI sends beside
 * each turn (same ids, no tools) are threads of their own and never take its place.
 */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLAUDE = path.join(repoRoot, 'node_modules/.bin/claude');
const TMUX = '/usr/bin/tmux';
const MODEL = 'claude-haiku-4-5';

/** Claude Code's metadata.user_id: its device id (`userID` in ~/.claude.json) and the session id, as JSON. */
const DEVICE_ID = createHash('sha256').update('compactd interactive e2e device').digest('hex');
const SESSION_ID = randomUUID();
const USER_ID = JSON.stringify({ device_id: DEVICE_ID, account_uuid: '', session_id: SESSION_ID });
/** The gateway's name for it (identity.ts): not a valid id as it is, so `user-<sha256 prefix>`. */
const CONVERSATION = `user-${createHash('sha256').update(USER_ID).digest('hex').slice(0, 32)}`;

const tmuxAvailable = existsSync(TMUX);
const PANE = 'claude';

let sim: TestLlmSim;
let stack: Stack;
let home: string;
let workdir: string;

/** a tmux server of this file's own, its socket in the temporary home: nothing of another tmux user is touched */
const tmux = (...args: string[]): string => execFileSync(TMUX, ['-S', path.join(home, 'tmux.sock'), ...args], { encoding: 'utf8' });
const screen = (): string => tmux('capture-pane', '-t', PANE, '-p');

async function waitForScreen(predicate: (text: string) => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  try {
    await waitFor(() => predicate(screen()), timeoutMs, 100, what);
  } catch (error) {
    throw new Error(`${(error as Error).message}; the terminal shows:\n${screen()}`, { cause: error });
  }
}

/** The prompt box waits for input and nothing is running. */
const idle = (text: string) => text.includes('? for shortcuts') && !text.includes('esc to interrupt');
/** The prompt box's own line: `❯ ` and what is typed in it. */
const promptLine = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('❯'))
    .at(-1) ?? '';

type AgentBody = {
  system?: Array<{ text: string }>;
  messages: Array<{ role: string; content: unknown }>;
  tools?: unknown[];
  metadata?: { user_id?: string };
};
const bodyOf = (call: CallRecord) => call.body as AgentBody;
/** The CLI's main loop declares its tools; its side requests (the session title) declare none. */
const mainCalls = () => sim.control.callLog().filter((call) => (bodyOf(call)?.tools?.length ?? 0) > 0);
const sideCalls = () => sim.control.callLog().filter((call) => (bodyOf(call)?.tools?.length ?? 0) === 0);
const systemText = (call: CallRecord) => (bodyOf(call).system ?? []).map((block) => block.text).join('\n');

/** Submits one turn (text, after a pasted text when given) and waits for its answer on the screen. */
async function turn(text: string, paste?: string): Promise<CallRecord> {
  const before = mainCalls().length;
  if (paste !== undefined) {
    const file = path.join(home, 'paste.txt');
    writeFileSync(file, paste);
    tmux('load-buffer', '-b', 'paste', file);
    // bracketed, as a terminal pastes: the CLI folds it into `[Pasted text #n …]` and sends it whole
    tmux('paste-buffer', '-p', '-d', '-b', 'paste', '-t', PANE);
    await waitForScreen((s) => promptLine(s).includes('[Pasted text'), 'the paste in the prompt box');
  }
  tmux('send-keys', '-t', PANE, '-l', text);
  await waitForScreen((s) => promptLine(s).includes(text), 'the typed turn');
  tmux('send-keys', '-t', PANE, 'Enter');
  await waitFor(() => mainCalls().length > before && mainCalls().at(-1)!.endMs !== null, 60_000, 100, `the model call of "${text}"`);
  await waitForScreen(idle, `the answer to "${text}"`);
  const call = mainCalls().at(-1)!;
  expect(call.status, JSON.stringify(call.body).slice(0, 500)).toBe(200);
  return call;
}

/** Deterministic notes the session pastes: many distinct sentences and names, so they weigh what they measure. */
function notes(part: string, lines: number): string {
  const parts = ['worker', 'archive', 'gateway', 'ledger', 'scheduler', 'summarizer', 'webhook', 'inspector'];
  const verbs = ['retries', 'flushes', 'rebuilds', 'validates', 'archives', 'splits', 'merges', 'replays'];
  return Array.from({ length: lines }, (_, i) => {
    const name = parts[i % parts.length]!;
    return `Note ${part}.${i}: the ${name} w-${part}${1000 + i * 7} ${verbs[(i * 3) % verbs.length]} batch b${i * 13} after step s${i % 17} in src/${name}/part-${i % 23}.ts, and it failed once with error E${part}${2000 + i}.`;
  }).join('\n');
}

async function jobsOf(id: string): Promise<Array<{ id: string; trigger: string; status: string }>> {
  const res = await stack.app.inject({ method: 'GET', url: `/v1/conversations/${id}/jobs`, headers: stack.auth() });
  return (res.json() as { jobs: Array<{ id: string; trigger: string; status: string }> }).jobs;
}

type Listed = { id: string; parentId: string | null; createdBy: string | null };

/** The tenant's conversations as GET /v1/conversations lists them (one page holds them all here). */
async function listConversations(query = ''): Promise<Listed[]> {
  const res = await stack.app.inject({ method: 'GET', url: `/v1/conversations?limit=200${query}`, headers: stack.auth() });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { conversations: Listed[] }).conversations;
}

/** The history keys stored in a conversation (position → key, compacted ones included) and where its active history starts. */
async function storedOf(externalId: string): Promise<StoredKeys> {
  const [row] = await stack.db.sql<Array<{ id: string }>>`select id from conversations where external_id = ${externalId}`;
  return row ? readStoredKeys(stack.deps.db, row.id) : { keys: new Map(), activeFrom: 0 };
}
const sessionKeys = async () => (await storedOf(CONVERSATION)).keys;

describe.skipIf(!existsSync(CLAUDE) || !tmuxAvailable)('Claude Code CLI, interactive, through the gateway', () => {
  beforeAll(async () => {
    // short answers (3% of the prompt): the pasted parts make the session's weight, the answers kept after the compaction stay small
    sim = await startTestLlmSim({ keepBodies: 200, outputRatio: 0.03 });
    stack = await createStack({
      env: { ANTHROPIC_BASE_URL: sim.url, ANTHROPIC_API_KEY: 'sk-ant-configured', COMPACTD_SUMMARIZER: 'local' },
    });
    const base = await stack.app.listen({ port: 0, host: '127.0.0.1' });
    home = mkdtempSync(path.join(tmpdir(), 'compactd-claude-home-'));
    workdir = mkdtempSync(path.join(tmpdir(), 'compactd-claude-work-'));
    execFileSync('git', ['init', '-q'], { cwd: workdir });
    // onboarding done, the key approved (the CLI keeps its last 20 characters), the folder trusted: no dialog stands before the prompt
    writeFileSync(
      path.join(home, '.claude.json'),
      JSON.stringify({
        hasCompletedOnboarding: true,
        lastOnboardingVersion: '2.1.328',
        theme: 'dark',
        userID: DEVICE_ID,
        customApiKeyResponses: { approved: [stack.key.slice(-20)], rejected: [] },
        projects: { [workdir]: { hasTrustDialogAccepted: true, allowedTools: [] } },
      }),
    );
    const env: Record<string, string> = {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: home,
      TERM: 'xterm-256color',
      // not CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: it also stops the session-title requests this test is about
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      ANTHROPIC_BASE_URL: `${base}/gateway/anthropic`,
      ANTHROPIC_API_KEY: stack.key,
    };
    const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
    const launcher = path.join(home, 'claude.sh');
    writeFileSync(
      launcher,
      [
        '#!/bin/sh',
        `cd ${quote(workdir)} || exit 1`,
        `env -i ${Object.entries(env)
          .map(([name, value]) => `${name}=${quote(value)}`)
          .join(' ')} ${quote(CLAUDE)} --model ${MODEL} --session-id ${SESSION_ID}`,
        // the screen stays for a failure's message when the CLI ends
        'echo "claude exited: $?"; sleep 600',
      ].join('\n'),
      { mode: 0o755 },
    );
    // the auto trigger below what four turns carry (~8k tokens of system prompt and reminders each, ~8k per pasted part)
    const created = await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: {
        id: CONVERSATION,
        model: MODEL,
        contextLimit: 48_000,
        policy: { triggerRatio: 0.75, warnRatio: 0.7, targetRatio: 0.2, minMessages: 4, keepRecent: 1 },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    tmux('new-session', '-d', '-s', PANE, '-x', '200', '-y', '50', launcher);
  });

  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {
      // the server was never started (beforeAll failed before it)
    }
    await stack?.close();
    await sim?.close();
    for (const dir of [home, workdir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('stores the session whole in one conversation, compacts it past its trigger, follows a rewind, and keeps side requests out', async () => {
    await waitForScreen(idle, 'the CLI ready for input', 60_000);

    const first = await turn('What does the worker in this repository do? Answer briefly.');
    expect(bodyOf(first).metadata?.user_id).toBe(USER_ID);
    // the first turn's title request races the main loop's first request for the id: the session's conversation has the main loop
    await waitFor(
      async () => (await sessionKeys()).get(0) === historyKey(0, storableMessage('anthropic', bodyOf(first).messages[0])),
      10_000,
      50,
      'the first turn stored in the session',
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}; conversations: ${JSON.stringify(await listConversations())}`);
    });

    // pasted parts until the conversation passes its trigger: the answer that carries the provider's count starts the compaction
    const before: CallRecord[] = [first];
    let auto: { id: string } | undefined;
    for (const part of ['A', 'B', 'C', 'D', 'E']) {
      before.push(await turn(`Part ${part} of the worker notes is above. Which failures matter most?`, notes(part, 180)));
      await waitFor(async () => (await sessionKeys()).size === 2 * before.length, 10_000, 50, 'the answer stored');
      auto = (await jobsOf(CONVERSATION)).find((job) => job.trigger === 'auto');
      if (auto) break;
    }
    expect(auto, 'no auto compaction after five pasted parts').toBeDefined();
    expect(before.length).toBeGreaterThanOrEqual(3);
    const done = await waitForJob(stack, auto!.id);
    expect(done.status, JSON.stringify(done.result ?? done.error)).toBe('completed');
    const largest = Math.max(...before.map((call) => call.inputTokens));
    for (const call of before) expect(systemText(call)).not.toContain('<compactd');

    // the next turn goes from the clip-archive, at most half the largest request before it
    const after = await turn('Given all of that, what is the next step?');
    expect(systemText(after)).toContain('<compactd');
    expect(after.inputTokens).toBeLessThanOrEqual(largest / 2);
    const later = await turn('And which test would prove the fix?');
    expect(systemText(later)).toContain('<compactd');

    // rewind the last turn and edit it: the CLI sends its history up to that turn and the edited one
    tmux('send-keys', '-t', PANE, '-l', '/rewind');
    await waitForScreen((s) => promptLine(s).includes('/rewind'), 'the typed /rewind');
    tmux('send-keys', '-t', PANE, 'Enter');
    await waitForScreen((s) => s.includes('Enter to continue'), 'the rewind list');
    tmux('send-keys', '-t', PANE, 'Up');
    await waitForScreen((s) => /❯ +And which test would prove the fix\?/.test(s), 'the last turn selected');
    tmux('send-keys', '-t', PANE, 'Enter');
    await waitForScreen((s) => /❯ 1\. Restore conversation/.test(s), 'the restore choice');
    tmux('send-keys', '-t', PANE, 'Enter');
    await waitForScreen((s) => promptLine(s).includes('And which test would prove the fix?'), 'the rewound turn back in the prompt box');
    tmux('send-keys', '-t', PANE, 'C-u');
    await waitForScreen((s) => promptLine(s).trim() === '❯', 'the prompt box cleared');
    const edited = await turn('Which integration test would prove the fix?');
    expect(bodyOf(edited).messages).toHaveLength(bodyOf(later).messages.length);
    expect(systemText(edited)).toContain('<compactd');
    expect(edited.inputTokens).toBeLessThanOrEqual(largest / 2);
    const rewound = await stack.db.sql<Array<{ role: string }>>`
      select a.role from archived_messages a join conversations c on c.id = a.conversation_id
       where c.external_id = ${CONVERSATION} and a.reason = 'rewound' order by a.seq`;
    expect(rewound.map((row) => row.role)).toEqual(['user', 'assistant']);

    const last = await turn('Then write the plan down in three steps.');
    expect(systemText(last)).toContain('<compactd');
    expect(last.inputTokens).toBeLessThanOrEqual(largest / 2);

    // the session is stored whole in its one conversation: every turn of the CLI's history (the rewound one left it), each answered
    const turns = before.length + 3;
    await waitFor(async () => (await sessionKeys()).size === 2 * turns, 10_000, 50, 'the last answer stored');
    const stored = await storedOf(CONVERSATION);
    expect(stored.activeFrom).toBeGreaterThan(0);
    const keyAt = (position: number, message: unknown) => historyKey(position, storableMessage('anthropic', message));
    // up to the compaction the provider got the CLI's own history; after it, the newest turn of each request is the CLI's own message
    bodyOf(before.at(-1)!).messages.forEach((message, position) =>
      expect(stored.keys.get(position), `position ${position}`).toBe(keyAt(position, message)),
    );
    [after, edited, last].forEach((call, index) => {
      const position = 2 * (before.length + index);
      expect(stored.keys.get(position), `position ${position}`).toBe(keyAt(position, bodyOf(call).messages.at(-1)));
    });
    // the rewound turn reaches the provider no more
    for (const call of [edited, last]) expect(JSON.stringify(call.body)).not.toContain('And which test would prove the fix?');
    for (const call of mainCalls()) expect(bodyOf(call).metadata?.user_id).toBe(USER_ID);

    // the side requests (the session title, beside each turn) carry the same ids: each is a thread of the session, none is in it
    const threadsOfSides = () => [...new Set(sideCalls().map((side) => threadId(CONVERSATION, keyAt(0, bodyOf(side).messages[0]))))].sort();
    const listedThreads = async () => (await listConversations()).filter((c) => c.id !== CONVERSATION);
    // a title request may still be on its way when the last turn is answered
    await waitFor(
      async () =>
        sim.control.inFlight() === 0 &&
        JSON.stringify((await listedThreads()).map((c) => c.id).sort()) === JSON.stringify(threadsOfSides()),
      10_000,
      50,
      'a thread for each side request',
    ).catch(async (error: Error) => {
      throw new Error(
        `${error.message}: listed ${JSON.stringify(await listConversations())}, side requests' threads ${JSON.stringify(threadsOfSides())}`,
      );
    });
    const sides = sideCalls();
    expect(
      sides.some((side) => JSON.stringify(bodyOf(side).messages[0]).includes('What does the worker in this repository do?')),
      'the first turn had no title request',
    ).toBe(true);
    for (const side of sides) expect(bodyOf(side).metadata?.user_id).toBe(USER_ID);
    expect(sides.map((side) => keyAt(0, bodyOf(side).messages[0]))).not.toContain(stored.keys.get(0));
    expect((await listConversations()).find((c) => c.id === CONVERSATION)).toMatchObject({ parentId: null });
    const threads = await listedThreads();
    expect((await listConversations(`&parentId=${CONVERSATION}`)).map((c) => c.id).sort()).toEqual(threads.map((c) => c.id).sort());
    for (const thread of threads) {
      expect(thread).toMatchObject({ parentId: CONVERSATION, createdBy: 'gateway' });
      // one title request and its answer
      await waitFor(async () => (await storedOf(thread.id)).keys.size === 2, 10_000, 50, `the answer stored in ${thread.id}`);
    }
    expect((await jobsOf(CONVERSATION)).filter((job) => job.trigger === 'auto')).toHaveLength(1);
  });
});
