import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../harness/transcripts.js';
import { activeMessages, compact, expectValidToolPairing, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await createStack();
});
afterAll(async () => {
  await stack?.close();
});

describe('compaction of a real Claude Code session with the local summarizer', () => {
  it('archives the older history, keeps every message exactly once and the context valid', async () => {
    const session = loadRealTranscript('spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl').conversations[0]!;
    await seedConversation(stack, 'cc-local', session.messages, { policy: { auto: false } });
    const before = (await stack.app.inject({ method: 'GET', url: '/v1/conversations/cc-local', headers: stack.auth() })).json();
    const newestUser = [...(await activeMessages(stack, 'cc-local'))]
      .reverse()
      .find((m) => m.role === 'user' && m.content.some((b) => b['type'] === 'text'));

    const job = await compact(stack, 'cc-local', { strategy: 'summarize' });
    expect(job.status).toBe('queued');
    const done = await waitForJob(stack, job.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.result.tokensAfter).toBeLessThan(done.result.tokensBefore);
    expect(done.result.tokensBefore).toBe(before.activeTokens);
    expect(done.result.batchIds.length).toBeGreaterThan(0);
    expect(done.progress.chunksDone).toBe(done.progress.chunksTotal);

    const active = await activeMessages(stack, 'cc-local');
    const clips = active.filter((m) => m.kind === 'clip_archive');
    expect(clips).toHaveLength(1);
    expect(clips[0]!.seq).toBe(done.result.clipArchiveSeq);
    expect(active.find((m) => m.seq === newestUser!.seq)?.content).toEqual(newestUser!.content);

    // every appended seq exactly once in active ∪ archive (clip-archive aside)
    const rows = await stack.db.db.execute<{ seq: string; n: number }>(sql`
      select seq, count(*)::int as n from (
        select seq from messages where kind = 'message'
        union all
        select seq from archived_messages where reason = 'summarized' and kind = 'message'
      ) s group by seq order by seq`);
    expect(rows.length).toBe(session.messages.length);
    expect(rows.every((r) => r.n === 1)).toBe(true);

    for (const format of ['anthropic', 'openai'] as const) {
      const context = (
        await stack.app.inject({ method: 'GET', url: `/v1/conversations/cc-local/context?format=${format}`, headers: stack.auth() })
      ).json();
      expectValidToolPairing(context, format);
    }
    // more batches than maxLiveBatches: the commit recorded a follow-up consolidation it did not wait for
    const consolidation = done.result.consolidationJobId ? await waitForJob(stack, done.result.consolidationJobId) : null;
    const after = (await stack.app.inject({ method: 'GET', url: '/v1/conversations/cc-local', headers: stack.auth() })).json();
    const tokensAfter = consolidation?.result?.tokensAfter ?? done.result.tokensAfter;
    expect(after).toMatchObject({ compactionCount: 1, activeTokens: tokensAfter, lastJob: { id: job.id, status: 'completed' } });
  });
});
