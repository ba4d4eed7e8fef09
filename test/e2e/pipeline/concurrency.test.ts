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

const tau = () => loadRealTranscript('tau-bench/gpt-4o-airline.json').conversations;

describe('concurrency around a compaction', () => {
  it('50 concurrent compaction requests for one conversation make one job', async () => {
    const conversation = tau().find((c) => c.messages.length >= 40)!;
    await seedConversation(stack, 'dedupe', conversation.messages);
    // The queue holds the job while the requests arrive: the API and the workers have pools of
    // their own, so a job that finished mid-burst would rightly let a later request start another.
    await stack.deps.queues.compaction.pause();
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        stack.app.inject({ method: 'POST', url: '/v1/conversations/dedupe/compactions', headers: stack.auth(), payload: {} }),
      ),
    );
    await stack.deps.queues.compaction.resume();
    const ids = new Set(responses.map((r) => r.json().id));
    expect(ids.size).toBe(1);
    expect(responses.filter((r) => r.statusCode === 202)).toHaveLength(1);
    expect(responses.filter((r) => r.statusCode === 200).every((r) => r.json().deduplicated === true)).toBe(true);
    const done = await waitForJob(stack, [...ids][0]!);
    expect(['completed', 'noop']).toContain(done.status);
    const jobs = await stack.db.db.execute<{ n: number }>(sql`select count(*)::int as n from compaction_jobs`);
    expect(jobs[0]?.n).toBe(1);
  });

  it('appends made while a compaction runs all survive and are not archived', async () => {
    const conversation = tau().filter((c) => c.messages.length >= 40)[1]!;
    await seedConversation(stack, 'appends', conversation.messages, { policy: { auto: false } });
    const job = await compact(stack, 'appends', { strategy: 'summarize', keepRecent: 4 });
    const appended: number[] = [];
    let running = true;
    const appender = (async () => {
      for (let i = 0; running || i < 5; i++) {
        const res = await stack.app.inject({
          method: 'POST',
          url: '/v1/conversations/appends/messages',
          headers: stack.auth(),
          payload: { messages: [{ role: 'user', content: `late message ${i}` }] },
        });
        expect(res.statusCode).toBe(201);
        appended.push(res.json().messages[0].seq);
      }
    })();
    const done = await waitForJob(stack, job.id);
    running = false;
    await appender;
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    const active = await activeMessages(stack, 'appends');
    const activeSeqs = new Set(active.map((m) => m.seq));
    for (const seq of appended) expect(activeSeqs.has(seq)).toBe(true);
    const archivedLate = await stack.db.db.execute<{ n: number }>(
      sql`select count(*)::int as n from archived_messages where seq = any(${sql.param(appended.map(String))}::bigint[])`,
    );
    expect(archivedLate[0]?.n).toBe(0);
    const texts = active.flatMap((m) => m.content.filter((b) => b['type'] === 'text').map((b) => b['text']));
    for (let i = 0; i < appended.length; i++) expect(texts).toContain(`late message ${i}`);
  });

  it('a second compaction of the same conversation summarizes the earlier summary into the new clip-archive', async () => {
    const conversation = tau().filter((c) => c.messages.length >= 40)[2]!;
    const half = Math.floor(conversation.messages.length / 2);
    let cut = half;
    while (cut < conversation.messages.length && conversation.messages[cut]!.role !== 'user') cut++;
    await seedConversation(stack, 'twice', conversation.messages.slice(0, cut), { policy: { auto: false } });
    const first = await waitForJob(stack, (await compact(stack, 'twice', { strategy: 'summarize', keepRecent: 2 })).id);
    expect(first.status, JSON.stringify(first.error)).toBe('completed');
    const rest = await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations/twice/messages',
      headers: stack.auth(),
      payload: { messages: conversation.messages.slice(cut) },
    });
    expect(rest.statusCode, rest.body).toBe(201);
    const second = await waitForJob(stack, (await compact(stack, 'twice', { strategy: 'summarize', keepRecent: 2 })).id);
    expect(second.status, JSON.stringify(second.error)).toBe('completed');
    const active = await activeMessages(stack, 'twice');
    const clips = active.filter((m) => m.kind === 'clip_archive');
    expect(clips).toHaveLength(1);
    const clipText = String(clips[0]!.content[0]!['text']);
    for (const batchId of [...first.result.batchIds, ...second.result.batchIds]) expect(clipText).toContain(batchId);
    const superseded = await stack.db.db.execute<{ n: number }>(
      sql`select count(*)::int as n from archived_messages where reason = 'superseded_clip'`,
    );
    expect(superseded[0]?.n).toBe(1);
  });
});
