import { randomUUID } from 'node:crypto';

import { eq } from 'drizzle-orm';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TEST_REDIS_URL } from '../../../harness/service-urls.js';
import { ensureTenant } from '../../../src/db/repos/api-keys.js';
import { type ConversationRow, insertConversation } from '../../../src/db/repos/conversations.js';
import { insertJob } from '../../../src/db/repos/jobs.js';
import { compactionJobs, conversations } from '../../../src/db/schema.js';
import { createMetrics } from '../../../src/obs/metrics.js';
import { JOBS } from '../../../src/queue/catalog.js';
import { closeQueues, createQueues, type Queues } from '../../../src/queue/producer.js';
import { type IdleDeps, processIdleCheck } from '../../../src/worker/processors/idle.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

/**
 * The idle check's decisions against real Postgres and a real queue, with the clock given
 * explicitly (the e2e test covers the timing through BullMQ's delays).
 */

let db: TestDatabase;
let redis: Redis;
let queues: Queues;
let deps: IdleDeps;
let tenantId: string;
beforeAll(async () => {
  db = await createTestDatabase();
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  queues = createQueues(redis, `t${randomUUID().replaceAll('-', '').slice(0, 12)}`);
  deps = { db: db.db, logger: pino({ level: 'silent' }), queues, metrics: createMetrics({ processMetrics: false }) };
  tenantId = (await ensureTenant(db.db, 'idle-tenant')).id;
});
afterAll(async () => {
  await queues?.compaction.obliterate({ force: true }).catch(() => undefined);
  if (queues) await closeQueues(queues);
  redis?.disconnect();
  await db?.drop();
});

const IDLE = { schedule: 'idle', idleSeconds: 60, idleRatio: 0.5, targetRatio: 0.3, minMessages: 10, cooldownMessages: 5 };

/** A conversation of 40 messages at `ratio` of a 10k window, last touched at `updatedAt`. */
async function conversation(policy: Record<string, unknown>, state: Partial<ConversationRow> = {}): Promise<ConversationRow> {
  const row = await insertConversation(db.db, {
    tenantId,
    externalId: `c-${randomUUID()}`,
    model: null,
    contextLimit: 10_000,
    policy,
    metadata: {},
  });
  const [updated] = await db.db
    .update(conversations)
    .set({ activeTokens: 6_000, messageCount: 40, nextSeq: 41, updatedAt: new Date('2026-01-01T00:00:00Z'), ...state })
    .where(eq(conversations.id, row!.id))
    .returning();
  return updated!;
}

const quietFor = (row: ConversationRow, seconds: number) => row.updatedAt.getTime() + seconds * 1000;
const check = (row: ConversationRow, nowMs: number) => processIdleCheck({ conversationId: row.id }, deps, nowMs);

describe('idle check', () => {
  it('re-arms itself for the rest of the quiet period when the conversation changed since', async () => {
    const row = await conversation(IDLE);
    expect(await check(row, quietFor(row, 20))).toBe('rescheduled');
    const delayed = await queues.compaction.getJobs(['delayed']);
    const mine = delayed.filter((j) => j.name === JOBS.idleCheck.name && j.data.conversationId === row.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.opts.delay).toBe(40_000);
    expect(mine[0]!.opts.deduplication?.id).toBe(`idle-${row.id}`);
  });

  it('starts one idle compaction once quiet above idleRatio, and enqueues its plan step', async () => {
    const row = await conversation(IDLE);
    expect(await check(row, quietFor(row, 61))).toBe('compacted');
    const jobs = await db.db.select().from(compactionJobs).where(eq(compactionJobs.conversationId, row.id));
    expect(jobs).toMatchObject([{ trigger: 'idle', status: 'queued', options: {} }]);
    expect(await queues.compaction.getJob(JOBS.plan.jobId({ jobId: jobs[0]!.id }))).toBeDefined();
    // a second check while that job is active starts nothing
    expect(await check(row, quietFor(row, 62))).toBe('active_job');
  });

  it.each([
    ['below idleRatio', IDLE, { activeTokens: 4_000 }, 'below_threshold'],
    ['provider-reported usage above idleRatio', IDLE, { activeTokens: 4_000, reportedInputTokens: 5_500 }, 'compacted'],
    ['too few messages', IDLE, { messageCount: 8, nextSeq: 9 }, 'too_few_messages'],
    ['in the cooldown after a compaction', IDLE, { lastCompactedSeq: 38 }, 'cooldown'],
    ['paused after a failed attempt', IDLE, { autoPausedUntilSeq: 40 }, 'paused'],
    ['auto: false', { ...IDLE, auto: false }, {}, 'disabled'],
    ['an eager schedule', { auto: true }, {}, 'not_idle_schedule'],
  ])('decides by the auto-trigger rules: %s', async (_, policy, state, outcome) => {
    const row = await conversation(policy, state as Partial<ConversationRow>);
    expect(await check(row, quietFor(row, 61))).toBe(outcome);
  });

  it('does nothing for a conversation that no longer exists, and counts outcomes', async () => {
    expect(await processIdleCheck({ conversationId: randomUUID() }, deps)).toBe('missing');
    const text = await deps.metrics!.registry.metrics();
    expect(text).toMatch(/compactd_idle_checks_total\{outcome="missing"\} 1\n/);
    expect(text).toMatch(/compactd_idle_checks_total\{outcome="rescheduled"\} 1\n/);
  });

  it('respects an existing manual job', async () => {
    const row = await conversation(IDLE);
    await insertJob(db.db, { tenantId, conversationId: row.id, trigger: 'api', options: {} });
    expect(await check(row, quietFor(row, 61))).toBe('active_job');
  });
});
