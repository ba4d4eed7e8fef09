import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createApiKey } from '../../../src/db/repos/api-keys.js';
import { activeMessages, compact, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * Pins over the real service (API, queue, workers, Postgres, the local summarizer): a message
 * pinned at append or through PUT …/messages/:seq/pin stays active and verbatim through a
 * compaction, with its whole tool exchange, and so does the newest user request; archived
 * messages and the clip-archive cannot be pinned; every bad input is a 4xx problem.
 */

let stack: Stack;
let otherKey: string;
beforeAll(async () => {
  stack = await createStack();
  otherKey = (await createApiKey(stack.deps.db, { tenantName: 'pins-other' })).key;
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

const text = (label: string, chars: number) => `${label} `.padEnd(chars, `${label.split(' ')[0]} lorem ipsum dolor `);
type Listed = { seq: number; role: string; kind: string; pinned: boolean; content: Array<Record<string, unknown>> };

async function create(id: string, messages: unknown[], policy: Record<string, unknown> = {}) {
  const created = await stack.app.inject({
    method: 'POST',
    url: '/v1/conversations',
    headers: stack.auth(),
    payload: { id, policy: { auto: false, ...policy } },
  });
  expect(created.statusCode, created.body).toBe(201);
  const appended = await stack.app.inject({
    method: 'POST',
    url: `/v1/conversations/${id}/messages`,
    headers: stack.auth(),
    payload: { messages },
  });
  expect(appended.statusCode, appended.body).toBe(201);
}

const pinRequest = (method: 'PUT' | 'DELETE', id: string, seq: string | number, headers: Record<string, string> = stack.auth()) =>
  stack.app.inject({ method, url: `/v1/conversations/${id}/messages/${seq}/pin`, headers });

/**
 * seq 1 system; turns i = 0..9 at seqs 2+4i (user request), 3+4i (assistant call c<i>),
 * 4+4i (its result), 5+4i (assistant); then 42 the newest request, 43-44 an exchange,
 * 45 a harness notification (meta turn), 46 the assistant.
 */
function session(pinnedAtAppend: number) {
  const messages: Array<Record<string, unknown>> = [{ role: 'system', content: 'You are a coding agent.' }];
  for (let i = 0; i < 10; i += 1) {
    messages.push({ role: 'user', content: text(`request ${i}`, 600) });
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `running step ${i}` },
        { type: 'tool_use', id: `c${i}`, name: 'Bash', input: { command: `make step-${i}` } },
      ],
    });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `c${i}`, content: text(`output ${i}`, 1500) }] });
    messages.push({ role: 'assistant', content: text(`done ${i}`, 900) });
  }
  messages.push({ role: 'user', content: 'Now rename the crate to lexer-rs and keep the public API unchanged.' });
  messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: 'r1', name: 'Bash', input: { command: 'cargo build' } }] });
  messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'r1', content: text('cargo', 800) }] });
  messages.push({ role: 'user', content: '<task-notification>\n<status>completed</status>\n</task-notification>' });
  messages.push({ role: 'assistant', content: 'Renaming now.' });
  const pinned = messages[pinnedAtAppend - 1] as Record<string, unknown>;
  pinned['pinned'] = true;
  return messages;
}

describe('pinned at append', () => {
  it('stores pinned: true, lists every message with its pin, and refuses a pin that is not a boolean, naming the field', async () => {
    await create('append-pins', [
      { role: 'user', content: 'keep me', pinned: true },
      { role: 'assistant', content: 'ok', pinned: false },
      { role: 'user', content: 'plain' },
    ]);
    const listed = await stack.app.inject({ method: 'GET', url: '/v1/conversations/append-pins/messages', headers: stack.auth() });
    expect((listed.json().messages as Listed[]).map((m) => m.pinned)).toEqual([true, false, false]);

    const openai = await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations/append-pins/messages',
      headers: stack.auth(),
      payload: { format: 'openai', messages: [{ role: 'user', content: 'from openai', pinned: true }] },
    });
    expect(openai.statusCode, openai.body).toBe(201);
    expect((await activeMessages(stack, 'append-pins')).at(-1)).toMatchObject({ seq: 4, pinned: true });

    for (const value of ['yes', 1, null]) {
      const res = await stack.app.inject({
        method: 'POST',
        url: '/v1/conversations/append-pins/messages',
        headers: stack.auth(),
        payload: {
          messages: [
            { role: 'user', content: 'fine' },
            { role: 'user', content: 'bad', pinned: value },
          ],
        },
      });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json().errors).toEqual([{ field: 'messages.1.pinned', message: 'must be a boolean (true pins the message)' }]);
    }
    expect(await activeMessages(stack, 'append-pins')).toHaveLength(4);
  });
});

describe('PUT and DELETE …/messages/:seq/pin', () => {
  beforeAll(async () => {
    await create('pin-routes', [
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'second' },
    ]);
  });

  it('pins and unpins an active message, idempotently, answering with the message', async () => {
    const pinned = await pinRequest('PUT', 'pin-routes', 2);
    expect(pinned.statusCode, pinned.body).toBe(200);
    expect(pinned.json()).toMatchObject({
      seq: 2,
      role: 'assistant',
      kind: 'message',
      pinned: true,
      content: [{ type: 'text', text: 'second' }],
    });
    expect((await pinRequest('PUT', 'pin-routes', 2)).json()).toMatchObject({ seq: 2, pinned: true });
    expect((await activeMessages(stack, 'pin-routes')).map((m) => (m as Listed).pinned)).toEqual([false, true]);

    const unpinned = await pinRequest('DELETE', 'pin-routes', 2);
    expect(unpinned.statusCode, unpinned.body).toBe(200);
    expect(unpinned.json()).toMatchObject({ seq: 2, pinned: false });
    expect((await pinRequest('DELETE', 'pin-routes', 2)).json()).toMatchObject({ seq: 2, pinned: false });
    expect((await activeMessages(stack, 'pin-routes')).map((m) => (m as Listed).pinned)).toEqual([false, false]);
  });

  it.each(['abc', '1.5', '0', '-3', '9007199254740993'])('refuses seq %s with a 400 naming params.seq', async (seq) => {
    for (const method of ['PUT', 'DELETE'] as const) {
      const res = await pinRequest(method, 'pin-routes', seq);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect([...new Set(res.json().errors.map((e: { field: string }) => e.field))]).toEqual(['params.seq']);
    }
  });

  it('answers 404 for a seq the conversation never had, an unknown conversation and another tenant’s conversation, 401 without a key', async () => {
    const missing = await pinRequest('PUT', 'pin-routes', 99);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'MESSAGE_NOT_FOUND', errors: [{ field: 'params.seq' }] });
    expect((await pinRequest('DELETE', 'pin-routes', 99)).json()).toMatchObject({ code: 'MESSAGE_NOT_FOUND' });
    expect((await pinRequest('PUT', 'no-such-conversation', 1)).json()).toMatchObject({ status: 404, code: 'CONVERSATION_NOT_FOUND' });
    const foreign = await pinRequest('PUT', 'pin-routes', 1, { authorization: `Bearer ${otherKey}` });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ code: 'CONVERSATION_NOT_FOUND' });
    expect((await pinRequest('PUT', 'pin-routes', 1, {})).statusCode).toBe(401);
    expect((await activeMessages(stack, 'pin-routes')).map((m) => (m as Listed).pinned)).toEqual([false, false]);
  });
});

describe('a compaction with pins', () => {
  it('keeps pinned messages with their tool exchange and the newest user request active and verbatim; archived ones and the clip-archive refuse a pin', async () => {
    // the second compaction below frees one small exchange: any progress will do
    await create('compact-pins', session(3), { minProgressRatio: 0 });
    const pinned = await pinRequest('PUT', 'compact-pins', 12);
    expect(pinned.statusCode, pinned.body).toBe(200);
    const before = (await activeMessages(stack, 'compact-pins')) as Listed[];
    expect(before.filter((m) => m.pinned).map((m) => m.seq)).toEqual([3, 12]);

    const job = await compact(stack, 'compact-pins', { strategy: 'summarize', keepRecent: 2 });
    const done = await waitForJob(stack, job.id);
    expect(done.status, JSON.stringify(done.error ?? done.result)).toBe('completed');

    const after = (await activeMessages(stack, 'compact-pins')) as Listed[];
    const clip = after.find((m) => m.kind === 'clip_archive');
    expect(clip).toBeDefined();
    const kept = after.filter((m) => m.kind === 'message').map((m) => m.seq);
    // system prompt; pinned 3 (a call) with its result 4; pinned 12 (a result) with its call 11; the newest request 42; the tail
    expect(kept).toEqual([1, 3, 4, 11, 12, 42, 45, 46]);
    const bySeq = new Map(before.map((m) => [m.seq, m]));
    for (const message of after.filter((m) => m.kind === 'message')) expect(message).toEqual(bySeq.get(message.seq));

    const context = await stack.app.inject({ method: 'GET', url: '/v1/conversations/compact-pins/context', headers: stack.auth() });
    const body = context.json() as { messages: Array<Record<string, unknown>> };
    expect(JSON.stringify(body)).toContain('Now rename the crate to lexer-rs');
    expect(JSON.stringify(body)).toContain('make step-2');
    expect(body.messages.every((m) => !('pinned' in m))).toBe(true);

    // the clip-archive took seq 2, the earliest archived position; 5 is an archived original
    expect(clip?.seq).toBe(2);
    const archived = await pinRequest('PUT', 'compact-pins', 5);
    expect(archived.statusCode).toBe(409);
    expect(archived.json()).toMatchObject({ code: 'MESSAGE_ARCHIVED' });
    const clipPin = await pinRequest('PUT', 'compact-pins', 2);
    expect(clipPin.statusCode).toBe(409);
    expect(clipPin.json()).toMatchObject({ code: 'CLIP_ARCHIVE_NOT_PINNABLE' });

    // unpinned, the message is compacted like any other
    expect((await pinRequest('DELETE', 'compact-pins', 12)).json()).toMatchObject({ pinned: false });
    const second = await waitForJob(stack, (await compact(stack, 'compact-pins', { strategy: 'summarize', keepRecent: 2 })).id);
    expect(second.status, JSON.stringify(second.error ?? second.result)).toBe('completed');
    const last = ((await activeMessages(stack, 'compact-pins')) as Listed[]).filter((m) => m.kind === 'message').map((m) => m.seq);
    expect(last).toEqual([1, 3, 4, 42, 45, 46]);
  });
});
