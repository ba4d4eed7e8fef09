import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../harness/transcripts.js';
import { activeMessages, compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await createStack();
});
afterAll(async () => {
  await stack?.close();
});

const strip = (messages: Awaited<ReturnType<typeof activeMessages>>) =>
  messages.map(({ seq, role, kind, content }) => ({ seq, role, kind, content }));
const revert = (jobId: string) => stack.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/revert`, headers: stack.auth() });

describe('revert', () => {
  it('restores the history exactly as before the compaction, plus what was appended since', async () => {
    const messages = loadRealTranscript('spotter-claude-code/tool_heavy.jsonl').conversations[0]!.messages;
    await seedConversation(stack, 'undo', messages, { policy: { auto: false } });
    const before = strip(await activeMessages(stack, 'undo'));
    const conversationBefore = (await stack.app.inject({ method: 'GET', url: '/v1/conversations/undo', headers: stack.auth() })).json();
    const job = await waitForJob(stack, (await compact(stack, 'undo', { strategy: 'summarize', keepRecent: 2 })).id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(strip(await activeMessages(stack, 'undo'))).not.toEqual(before);
    const late = [{ role: 'user', content: 'one more thing' }];
    expect(
      (
        await stack.app.inject({
          method: 'POST',
          url: '/v1/conversations/undo/messages',
          headers: stack.auth(),
          payload: { messages: late },
        })
      ).statusCode,
    ).toBe(201);

    const res = await revert(job.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result.revertedAt).toBeTruthy();
    const after = strip(await activeMessages(stack, 'undo'));
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length).map((m) => m.content)).toEqual([[{ type: 'text', text: 'one more thing' }]]);
    const conversation = (await stack.app.inject({ method: 'GET', url: '/v1/conversations/undo', headers: stack.auth() })).json();
    expect(conversation.compactionCount).toBe(0);
    expect(conversation.messageCount).toBe(conversationBefore.messageCount + 1);
    const leftovers = await stack.db.db.execute<{ a: number; b: number }>(sql`
      select (select count(*)::int from archived_messages where job_id = ${job.id}) as a, (select count(*)::int from batches where job_id = ${job.id}) as b`);
    expect(leftovers[0]).toEqual({ a: 0, b: 0 });
    expect((await revert(job.id)).statusCode).toBe(409);
  });

  it('only the latest compaction can be reverted; reverting it restores the earlier compaction state', async () => {
    const messages = loadRealTranscript('tau-bench/gpt-4o-airline.json').conversations.find((c) => c.messages.length >= 50)!.messages;
    await seedConversation(stack, 'undo-twice', messages.slice(0, 30), { policy: { auto: false } });
    const first = await waitForJob(stack, (await compact(stack, 'undo-twice', { strategy: 'summarize', keepRecent: 4 })).id);
    expect(first.status).toBe('completed');
    const afterFirst = strip(await activeMessages(stack, 'undo-twice'));
    await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations/undo-twice/messages',
      headers: stack.auth(),
      payload: { messages: messages.slice(30) },
    });
    const withAppends = strip(await activeMessages(stack, 'undo-twice'));
    const second = await waitForJob(stack, (await compact(stack, 'undo-twice', { strategy: 'summarize', keepRecent: 4 })).id);
    expect(second.status).toBe('completed');

    const refused = await revert(first.id);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('NOT_LATEST_COMPACTION');
    expect((await revert(second.id)).statusCode).toBe(200);
    expect(strip(await activeMessages(stack, 'undo-twice'))).toEqual(withAppends);
    expect(withAppends.slice(0, afterFirst.length)).toEqual(afterFirst);
    // now the first one is the latest again
    expect((await revert(first.id)).statusCode).toBe(200);
    const original = strip(await activeMessages(stack, 'undo-twice'));
    expect(original.every((m) => m.kind === 'message')).toBe(true);
    expect(original).toHaveLength(messages.length);
  });

  it('reverts a mask-only compaction (Tier 2 rewrites get their original content back)', async () => {
    const messages = loadRealTranscript('spotter-claude-code/tool_heavy.jsonl').conversations[0]!.messages;
    await seedConversation(stack, 'undo-mask', messages, { policy: { auto: false, tier2: { minTokens: 10 } } });
    const before = strip(await activeMessages(stack, 'undo-mask'));
    const job = await waitForJob(stack, (await compact(stack, 'undo-mask', { strategy: 'mask', keepRecent: 2, target: { tokens: 1 } })).id);
    expect(job.status, JSON.stringify(job.result ?? job.error)).toBe('completed');
    expect(job.result.rewrites.masked).toBeGreaterThan(0);
    expect((await revert(job.id)).statusCode).toBe(200);
    expect(strip(await activeMessages(stack, 'undo-mask'))).toEqual(before);
  });
});
