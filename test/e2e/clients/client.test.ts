import { type CompactdClient, createClient, type ExportLine, isCompactdError, type Job } from 'compactd/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../harness/transcripts.js';
import { expectValidToolPairing } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

// The client speaks HTTP, so this file is the one place the stack listens on a real socket.
let stack: Stack;
let idle: Stack;
let baseUrl: string;
let client: CompactdClient;
let idleClient: CompactdClient;
beforeAll(async () => {
  stack = await createStack();
  // no workers: jobs stay queued, for timeouts and cancellation
  idle = await createStack({ workers: false });
  baseUrl = await stack.app.listen({ port: 0, host: '127.0.0.1' });
  client = createClient({ baseUrl, apiKey: stack.key });
  idleClient = createClient({ baseUrl: await idle.app.listen({ port: 0, host: '127.0.0.1' }), apiKey: idle.key });
});
afterAll(async () => {
  await stack?.close();
  await idle?.close();
});

const session = () => loadRealTranscript('spotter-claude-code/subagent.jsonl').conversations[0]!.messages;

async function caught(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    if (isCompactdError(error)) return error;
    throw error;
  }
  throw new Error('expected a CompactdError');
}

describe('compactd/client against a running service', () => {
  it('changes and erases a conversation; erasing waits for an active compaction to be cancelled', async () => {
    await idleClient.createConversation({ id: 'client-life', metadata: { stage: 1 } });
    const updated = await idleClient.updateConversation('client-life', {
      model: 'gpt-4o',
      metadata: { stage: 2 },
      policy: { keepRecent: 6 },
    });
    expect(updated).toMatchObject({ model: 'gpt-4o', metadata: { stage: 2 }, policy: { keepRecent: 6 } });
    const contradiction = await caught(idleClient.updateConversation('client-life', { policy: { targetRatio: 0.9 } }));
    expect(contradiction).toMatchObject({ status: 400, code: 'INVALID_POLICY' });
    expect(contradiction.errors?.map((e) => e.field)).toEqual(['body.policy.targetRatio']);

    const job = await idleClient.compact('client-life');
    expect(await caught(idleClient.deleteConversation('client-life'))).toMatchObject({ status: 409, code: 'COMPACTION_ACTIVE' });
    await idleClient.cancelJob(job.id);
    await idleClient.deleteConversation('client-life');
    expect(await caught(idleClient.getConversation('client-life'))).toMatchObject({ status: 404, code: 'CONVERSATION_NOT_FOUND' });
  });

  it('creates, appends, pages and renders context; problem+json comes back as CompactdError', async () => {
    const created = await client.createConversation({ id: 'client-basic', model: 'claude-sonnet-4-5', policy: { auto: false } });
    expect(created).toMatchObject({ id: 'client-basic', model: 'claude-sonnet-4-5', messageCount: 0, lastJob: null });

    const exists = await caught(client.createConversation({ id: 'client-basic' }));
    expect(exists).toMatchObject({ status: 409, code: 'CONVERSATION_EXISTS', title: 'Conflict' });
    expect(exists.errors).toEqual([{ field: 'body.id', message: expect.stringContaining('client-basic') }]);

    const messages = session();
    let appended = 0;
    for (let i = 0; i < messages.length; i += 40) {
      const result = await client.appendMessages('client-basic', messages.slice(i, i + 40));
      appended += result.messages.length;
      expect(result.compaction).toBeNull();
    }
    expect(appended).toBe(messages.length);

    const seqs: number[] = [];
    for await (const message of client.iterateMessages('client-basic', { pageSize: 7 })) seqs.push(message.seq);
    expect(seqs).toHaveLength(messages.length);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));

    const conversation = await client.getConversation('client-basic');
    expect(conversation.messageCount).toBe(messages.length);
    expect(conversation.activeTokens).toBeGreaterThan(0);

    expectValidToolPairing(await client.getContext('client-basic'), 'anthropic');
    const openai = await client.getContext('client-basic', { format: 'openai' });
    expectValidToolPairing(openai, 'openai');
    expect(openai).not.toHaveProperty('system');

    const badRole = await caught(
      client.appendMessages('client-basic', { format: 'anthropic', messages: [{ role: 'robot' as 'user', content: 'hi' }] }),
    );
    expect(badRole.status).toBe(400);
    expect(badRole.errors.length).toBeGreaterThan(0);
    expect(badRole.errors[0]!.field).toMatch(/messages\.0\.role/);

    const missing = await caught(client.getConversation('no-such-conversation'));
    expect(missing).toMatchObject({ status: 404, code: 'CONVERSATION_NOT_FOUND' });

    const stranger = createClient({ baseUrl, apiKey: 'cpd_not-a-key' });
    expect(await caught(stranger.getConversation('client-basic'))).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('an Idempotency-Key makes a repeated append a replay', async () => {
    await client.createConversation({ id: 'client-idem', policy: { auto: false } });
    const first = await client.appendMessages('client-idem', [{ role: 'user', content: 'once' }], { idempotencyKey: 'append-1' });
    const again = await client.appendMessages('client-idem', [{ role: 'user', content: 'once' }], { idempotencyKey: 'append-1' });
    expect(again).toEqual(first);
    expect((await client.getConversation('client-idem')).messageCount).toBe(1);
  });

  it('compacts, follows the job with progress, reads batches, originals, export and search, then reverts', async () => {
    await client.createConversation({ id: 'client-compact', policy: { auto: false } });
    const messages = session();
    await client.appendMessages('client-compact', messages);
    const before = await client.getConversation('client-compact');

    const job = await client.compact('client-compact', { strategy: 'summarize' });
    expect(job.status).toBe('queued');

    const snapshots: Job[] = [];
    const done = await client.waitForJob(job.id, { timeoutMs: 60_000, pollSeconds: 1, onProgress: (j) => snapshots.push(j) });
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(snapshots.at(-1)).toEqual(done);
    expect(done.progress.chunksDone).toBe(done.progress.chunksTotal);
    if (done.status !== 'completed') throw new Error(`job ended ${done.status}`);
    const result = done.result;
    expect(result.tokensBefore).toBe(before.activeTokens);
    expect(result.tokensAfter).toBeLessThan(result.tokensBefore);
    expect(result.batchIds.length).toBeGreaterThan(0);

    const history = await client.listJobs('client-compact');
    expect(history.jobs.map((j) => j.id)).toContain(job.id);

    const page = await client.listBatches('client-compact', { limit: 200 });
    expect(page.batches.map((b) => b.id).sort()).toEqual([...result.batchIds].sort());
    const batch = await client.getBatch(result.batchIds[0]!);
    expect(batch.jobId).toBe(job.id);
    const originals = await client.getBatchMessages(batch.id, { limit: 1000 });
    expect(originals.messages.map((m) => m.seq)).toEqual([...batch.seqs].sort((a, b) => a - b));
    expect(originals.messages.every((m) => m.archived && m.batchId === batch.id)).toBe(true);

    const lines: ExportLine[] = [];
    for await (const line of client.exportConversation('client-compact')) lines.push(line);
    expect(lines.filter((l) => l.kind === 'message')).toHaveLength(messages.length);
    expect(lines.filter((l) => l.kind === 'clip_archive')).toHaveLength(1);
    expect(lines.filter((l) => l.archived).length).toBe(result.messagesArchived);
    // leaving the iteration early closes the stream
    let taken = 0;
    for await (const _line of client.exportConversation('client-compact')) if (++taken === 3) break;
    expect(taken).toBe(3);

    const word = distinctiveWord(lines.find((l) => l.archived && l.reason === 'summarized' && l.content.some(isLongText))!);
    const search = await client.searchArchive('client-compact', word, { limit: 50 });
    expect(search.hits.length).toBeGreaterThan(0);
    expect(search.hits.every((h) => lines.some((l) => l.seq === h.seq && l.archived))).toBe(true);

    expect(await caught(client.cancelJob(job.id))).toMatchObject({ status: 409, code: 'JOB_NOT_CANCELLABLE' });
    const reverted = await client.revertJob(job.id);
    expect(reverted.result?.revertedAt).toEqual(expect.any(String));
    expect((await client.getConversation('client-compact')).activeTokens).toBe(before.activeTokens);
    expect(await caught(client.revertJob(job.id))).toMatchObject({ status: 409, code: 'JOB_NOT_REVERTIBLE' });
  });

  it('serves the agent tool definitions in both formats', async () => {
    const anthropic = await client.getTool('compact');
    expect(anthropic.name).toBe('compact');
    expect(anthropic.input_schema.type).toBe('object');
    const openai = await client.getTool('recall', 'openai');
    expect(openai).toMatchObject({ type: 'function', function: { name: 'recall' } });
    expect(openai.function.parameters.required).toContain('query');
  });

  it('deduplicates an active job; waitForJob gives up with TIMEOUT; a queued job can be cancelled', async () => {
    await idleClient.createConversation({ id: 'client-idle', policy: { auto: false } });
    await idleClient.appendMessages('client-idle', session().slice(0, 60));
    const job = await idleClient.compact('client-idle', {});
    const again = await idleClient.compact('client-idle', { strategy: 'mask' });
    expect(again).toMatchObject({ id: job.id, status: 'queued', deduplicated: true });
    const started = Date.now();
    const timeout = await caught(idleClient.waitForJob(job.id, { timeoutMs: 1_500, pollSeconds: 0.5 }));
    expect(timeout).toMatchObject({ status: 0, code: 'TIMEOUT' });
    expect(timeout.detail).toContain('still queued');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    const cancelled = await idleClient.cancelJob(job.id);
    expect(cancelled.status).toBe('cancelled');
    expect((await idleClient.waitForJob(job.id, { timeoutMs: 5_000 })).status).toBe('cancelled');
  });

  it('configures webhooks (tenant and conversation) and reads the delivery log', async () => {
    // disabled: nothing is delivered to the unreachable URL while other tests compact
    const created = await client.setWebhook({ url: 'https://hooks.example/hooks', events: ['compaction.completed'], enabled: false });
    expect(created).toMatchObject({ scope: 'tenant', conversationId: null, events: ['compaction.completed'], enabled: false });
    expect(created.secret).toEqual(expect.any(String));
    const read = await client.getWebhook();
    expect(read.secret).toBeUndefined();
    expect(created.secret!.startsWith(read.secretHint.replace(/…$/, ''))).toBe(true);

    await client.createConversation({ id: 'client-hooks', policy: { auto: false } });
    const own = await client.setConversationWebhook('client-hooks', {
      url: 'https://hooks.example/own',
      secret: 'a-secret-of-16-chars',
      enabled: false,
    });
    expect(own).toMatchObject({ scope: 'conversation', conversationId: 'client-hooks', url: 'https://hooks.example/own' });
    expect((await client.getConversationWebhook('client-hooks')).url).toBe('https://hooks.example/own');
    await client.deleteConversationWebhook('client-hooks');
    expect(await caught(client.getConversationWebhook('client-hooks'))).toMatchObject({ status: 404 });

    expect(await client.listWebhookDeliveries({ conversationId: 'client-hooks', limit: 10 })).toEqual({ deliveries: [], nextBefore: null });
    const invalid = await caught(client.setWebhook({ url: 'ftp://example.com/x' }));
    expect(invalid.status).toBe(400);
    expect(invalid.errors.map((e) => e.field)).toContain('body.url');
    const internal = await caught(client.setWebhook({ url: 'http://127.0.0.1:6379/' }));
    expect(internal).toMatchObject({ status: 400, code: 'WEBHOOK_TARGET_NOT_ALLOWED' });
    await client.deleteWebhook();
    expect(await caught(client.getWebhook())).toMatchObject({ status: 404 });
  });

  it('reports health and readiness', async () => {
    expect(await client.health()).toEqual({ status: 'ok' });
    expect(await client.ready()).toMatchObject({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
  });
});

/** Whitespace-separated plain words (a word inside a path is part of one path token for Postgres). */
const plainWords = (text: string) =>
  text
    .split(/\s+/)
    .map((w) => w.replace(/^[("'`]+|[)"'`.,:;!?]+$/g, ''))
    .filter((w) => /^[A-Za-z]{8,}$/.test(w));
const isLongText = (block: Record<string, unknown>) =>
  block['type'] === 'text' && typeof block['text'] === 'string' && plainWords(block['text']).length > 0;

/** The longest plain word of the message's text: specific enough to find the message again. */
function distinctiveWord(line: ExportLine): string {
  const words = line.content.filter(isLongText).flatMap((b) => plainWords(b['text'] as string));
  return [...words].sort((a, b) => b.length - a.length)[0]!;
}
