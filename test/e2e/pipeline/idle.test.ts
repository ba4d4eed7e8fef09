import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../harness/transcripts.js';
import { waitFor } from '../../../harness/wait-for.js';
import { seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await createStack();
});
afterAll(async () => {
  await stack?.close();
});

const IDLE_SECONDS = 1;
const tau = () => loadRealTranscript('tau-bench/gpt-4o-airline.json').conversations.filter((c) => c.messages.length >= 30);

async function idleJobs(): Promise<Array<{ id: string; status: string }>> {
  return stack.db.db.execute<{ id: string; status: string }>(
    sql`select id, status from compaction_jobs where trigger = 'idle' order by created_at`,
  );
}

async function append(id: string, text: string) {
  const res = await stack.app.inject({
    method: 'POST',
    url: `/v1/conversations/${id}/messages`,
    headers: stack.auth(),
    payload: { messages: [{ role: 'user', content: text }] },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { compaction: unknown };
}

/** No idle check is delayed, waiting or running in the compaction queue. */
async function idleChecksDrained(): Promise<boolean> {
  const counts = await stack.deps.queues.compaction.getJobCounts('delayed', 'wait', 'active', 'prioritized');
  return Object.values(counts).every((n) => n === 0);
}

/** Active tokens the transcript has once stored (to size a window that it fills to 60%). */
async function measureTokens(messages: Parameters<typeof seedConversation>[2]): Promise<number> {
  await seedConversation(stack, 'measure', messages, { policy: { auto: false } });
  const res = await stack.app.inject({ method: 'GET', url: '/v1/conversations/measure', headers: stack.auth() });
  return res.json().activeTokens as number;
}

describe('schedule: idle', () => {
  it('compacts once after the conversation has been quiet, never while appends continue', async () => {
    const messages = tau()[0]!.messages;
    const tokens = await measureTokens(messages);
    const policy = { schedule: 'idle', idleSeconds: IDLE_SECONDS, idleRatio: 0.5, targetRatio: 0.3, minMessages: 4, keepRecent: 4 };
    await seedConversation(stack, 'idle', messages, { contextLimit: Math.max(1024, Math.ceil(tokens / 0.6)), policy });

    // Appends for three idle periods: each pushes the check back, so nothing may start.
    const until = Date.now() + 3 * IDLE_SECONDS * 1000;
    let appends = 0;
    while (Date.now() < until) {
      const res = await append('idle', `still working, step ${appends++}`);
      expect(res.compaction).toBeNull();
      expect(await idleJobs()).toEqual([]);
      // debounced: one delayed check per conversation, replaced by each append
      expect((await stack.deps.queues.compaction.getJobCounts('delayed')).delayed).toBeLessThanOrEqual(1);
    }
    expect(appends).toBeGreaterThan(10);

    await waitFor(async () => (await idleJobs()).length > 0, 15_000);
    const [job] = await idleJobs();
    const done = await waitForJob(stack, job!.id);
    expect(done.status, JSON.stringify(done.result ?? done.error)).toBe('completed');
    expect(done.trigger).toBe('idle');
    expect(done.result.tokensAfter).toBeLessThan(done.result.tokensBefore);

    // Nothing is left armed, and no second idle compaction ran.
    await waitFor(idleChecksDrained, 15_000);
    expect(await idleJobs()).toHaveLength(1);
    const listed = (await stack.app.inject({ method: 'GET', url: '/v1/conversations/idle/jobs', headers: stack.auth() })).json();
    expect(listed.jobs.map((j: { trigger: string }) => j.trigger)).toEqual(['idle']);
    const metrics = (await stack.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/compactd_idle_checks_total\{outcome="compacted"\} 1\n/);
    expect(metrics).toMatch(/compactd_jobs_finished_total\{status="completed",trigger="idle"\} 1\n/);
  });

  it('arms no check for an eager conversation, or for an idle one below idleRatio', async () => {
    const before = (await idleJobs()).length;
    await waitFor(idleChecksDrained, 15_000);
    await seedConversation(stack, 'eager', tau()[1]!.messages.slice(0, 6), { policy: { auto: true } });
    await seedConversation(stack, 'small', tau()[1]!.messages.slice(0, 6), {
      policy: { schedule: 'idle', idleSeconds: IDLE_SECONDS, idleRatio: 0.9 },
    });
    await append('small', 'one more');
    expect(await idleChecksDrained()).toBe(true);
    expect((await idleJobs()).length).toBe(before);
  });
});
