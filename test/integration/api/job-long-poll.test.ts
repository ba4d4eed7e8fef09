import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { waitFor } from '../../../harness/wait-for.js';
import { createJobWaiters, createJobWaitersFor, type JobWaiters } from '../../../src/api/job-waiters.js';
import { createDb, type DbHandle } from '../../../src/db/client.js';
import { pingJobStatusChannel, subscribeJobStatus } from '../../../src/db/job-status-channel.js';
import { findTenantByApiKey } from '../../../src/db/repos/api-keys.js';
import { getConversation } from '../../../src/db/repos/conversations.js';
import { getJobsByIds, insertJob, transitionJob } from '../../../src/db/repos/jobs.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';

/**
 * Long-polls wait on the jobs' status channel (migration 0007), not on the pool. The sweep of
 * these waiters runs once a minute, so a waiter that answers within seconds was woken by a
 * notification; every statement the app sends is counted.
 */
const SWEEP_MS = 60_000;

let api: TestApi;
let counted: DbHandle;
let waiters: JobWaiters;
let statements = 0;
/** statements that read the jobs table (the waiters' reads; auth reads other tables) */
let jobReads = 0;
let tenantId: string;
let conversationSeq = 0;

async function conversation(): Promise<string> {
  const id = `c-${++conversationSeq}`;
  const res = await api.app.inject({ method: 'POST', url: '/v1/conversations', headers: api.auth(), payload: { id } });
  expect(res.statusCode, res.body).toBe(201);
  const row = await getConversation(api.db.db, tenantId, id);
  return row!.id;
}

/** a job as a worker leaves it mid-run */
async function runningJob(): Promise<string> {
  const job = await insertJob(api.db.db, { tenantId, conversationId: await conversation(), trigger: 'api', options: {} });
  await transitionJob(api.db.db, job!.id, ['queued'], { status: 'summarizing', startedAt: new Date() });
  return job!.id;
}

function longPoll(jobId: string, options: { waitS?: number; key?: string; signal?: AbortSignal } = {}): Promise<LightMyRequestResponse> {
  return api.app.inject({
    method: 'GET',
    url: `/v1/jobs/${jobId}?wait=${options.waitS ?? 50}`,
    headers: api.auth(options.key),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

async function openWaiters(count: number) {
  await waitFor(() => waiters.size() === count, 60_000, 25, `${count} open waiters`);
}

/** until a half second passes without a statement: the waiters' first reads are done */
async function settled() {
  let last = -1;
  await waitFor(
    () => {
      const quiet = statements === last;
      last = statements;
      return quiet;
    },
    60_000,
    500,
    'first reads done',
  );
}

beforeAll(async () => {
  api = await createTestApi((db) => {
    const onQuery = (query: string) => {
      statements++;
      if (/from "compaction_jobs"/i.test(query)) jobReads++;
    };
    counted = createDb(db.url, { max: 10, name: 'long-poll-test', onQuery });
    waiters = createJobWaitersFor(counted.db, counted.sql, {
      logger: pino({ level: 'silent' }),
      maxWaitersPerTenant: 3000,
      resyncEveryMs: SWEEP_MS,
    });
    return { db: counted.db, sql: counted.sql, jobWaiters: waiters };
  });
  tenantId = (await findTenantByApiKey(api.db.db, api.key))!.tenantId;
});

afterAll(async () => {
  await waiters.close();
  await counted.close();
  await api.close();
});

describe('GET /v1/jobs/:id?wait=', () => {
  it.each([
    ['completed', { status: 'completed' as const, finishedAt: new Date(), result: {} }],
    ['failed', { status: 'failed' as const, finishedAt: new Date(), error: { code: 'STEP_FAILED', message: 'x' } }],
  ])('answers as soon as the job is %s, long before the deadline and the sweep', async (status, patch) => {
    const jobId = await runningJob();
    const started = Date.now();
    const pending = longPoll(jobId);
    await openWaiters(1);
    await transitionJob(api.db.db, jobId, ['summarizing'], patch);
    const res = await pending;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe(status);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(waiters.size()).toBe(0);
  });

  it('answers when the job is cancelled through the API', async () => {
    const jobId = await runningJob();
    const pending = longPoll(jobId);
    await openWaiters(1);
    const cancel = await api.app.inject({ method: 'DELETE', url: `/v1/jobs/${jobId}`, headers: api.auth() });
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect((await pending).json().status).toBe('cancelled');
  });

  it('answers a finished job at once, an unknown or foreign job with 404', async () => {
    const jobId = await runningJob();
    await transitionJob(api.db.db, jobId, ['summarizing'], { status: 'completed', finishedAt: new Date() });
    expect((await longPoll(jobId)).json().status).toBe('completed');
    expect((await longPoll('00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    expect((await longPoll(await runningJob(), { key: api.otherKey })).statusCode).toBe(404);
    expect(waiters.size()).toBe(0);
  });

  it('answers with the running job at the end of the wait', async () => {
    const res = await longPoll(await runningJob(), { waitS: 1 });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('summarizing');
    expect(waiters.size()).toBe(0);
  });

  it('N waiters send no statement while they wait, and one read wakes them all', async () => {
    const jobIds = [await runningJob(), await runningJob()];
    const n = 400;
    const pending = Array.from({ length: n }, (_, i) => longPoll(jobIds[i % 2]!));
    await openWaiters(n);
    await settled();
    statements = 0;
    // The code before polled each waiter's row every 200 ms: 400 waiters, ~6000 statements here.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const whileWaiting = statements;
    for (const jobId of jobIds) await transitionJob(api.db.db, jobId, ['summarizing'], { status: 'completed', finishedAt: new Date() });
    const answers = await Promise.all(pending);
    expect(answers.every((res) => res.json().status === 'completed')).toBe(true);
    expect(whileWaiting).toBe(0);
    // one shared read per job for its 200 waiters (the transitions went through another pool)
    expect(statements).toBeLessThanOrEqual(2);
  });

  it("waiters arriving together share the job's reads instead of sending one each", async () => {
    const jobId = await runningJob();
    const n = 400;
    jobReads = 0;
    // The code before read the row once per arriving waiter: 400 statements queued on the pool
    // ahead of every other request (2000 waiters held another tenant's read for ~5 s).
    const pending = Array.from({ length: n }, () => longPoll(jobId));
    await openWaiters(n);
    await settled();
    const onArrival = jobReads;
    await transitionJob(api.db.db, jobId, ['summarizing'], { status: 'completed', finishedAt: new Date() });
    expect((await Promise.all(pending)).every((res) => res.json().status === 'completed')).toBe(true);
    // at most one read in flight and one queued per job: a handful for the whole burst
    expect(onArrival).toBeLessThanOrEqual(n / 10);
  });

  it('answers the waiters of a finished job a slice at a time, other requests served in between', async () => {
    const jobId = await runningJob();
    const n = 400;
    let answered = 0;
    let answeredBeforeNextTurn = -1;
    const pending = Array.from({ length: n }, () =>
      longPoll(jobId).then((res) => {
        // the first answer: how many more come before the event loop takes its next turn?
        if (answered++ === 0) setImmediate(() => (answeredBeforeNextTurn = answered));
        return res;
      }),
    );
    await openWaiters(n);
    await settled();
    await transitionJob(api.db.db, jobId, ['summarizing'], { status: 'completed', finishedAt: new Date() });
    expect((await Promise.all(pending)).every((res) => res.json().status === 'completed')).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    // The code before answered all of them in one turn: 2000 waiters held the process for ~2 s.
    expect(answeredBeforeNextTurn).toBeGreaterThan(0);
    expect(answeredBeforeNextTurn).toBeLessThan(n / 2);
  });

  it('drops the waiter of a client that goes away', async () => {
    const jobId = await runningJob();
    const controllers = Array.from({ length: 5 }, () => new AbortController());
    const pending = controllers.map((controller) => longPoll(jobId, { signal: controller.signal }).catch((error: unknown) => error));
    await openWaiters(5);
    for (const controller of controllers) controller.abort();
    await openWaiters(0);
    await Promise.all(pending);
  });

  it('caps open long-polls per tenant: the next is a 429 with retry-after, other tenants unaffected', async () => {
    let capped!: JobWaiters;
    const cappedApi = await createTestApi((db) => {
      capped = createJobWaitersFor(db.db, db.sql, { logger: pino({ level: 'silent' }), maxWaitersPerTenant: 3, resyncEveryMs: SWEEP_MS });
      return { jobWaiters: capped };
    });
    try {
      const cappedTenant = (await findTenantByApiKey(cappedApi.db.db, cappedApi.key))!.tenantId;
      const created = await cappedApi.app.inject({
        method: 'POST',
        url: '/v1/conversations',
        headers: cappedApi.auth(),
        payload: { id: 'cap' },
      });
      expect(created.statusCode).toBe(201);
      const conversationId = (await getConversation(cappedApi.db.db, cappedTenant, 'cap'))!.id;
      const job = (await insertJob(cappedApi.db.db, { tenantId: cappedTenant, conversationId, trigger: 'api', options: {} }))!;
      const poll = (key: string, signal?: AbortSignal) =>
        cappedApi.app.inject({
          method: 'GET',
          url: `/v1/jobs/${job.id}?wait=50`,
          headers: cappedApi.auth(key),
          ...(signal ? { signal } : {}),
        });
      const controllers = Array.from({ length: 3 }, () => new AbortController());
      const open = controllers.map((controller) => poll(cappedApi.key, controller.signal).catch(() => null));
      await waitFor(() => capped.size() === 3, 30_000, 25, '3 waiters');

      const refused = await poll(cappedApi.key);
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(refused.headers['retry-after']).toBe('2');
      expect(refused.json().code).toBe('TOO_MANY_WAITERS');
      // another tenant's long-poll is counted apart (404: the job is not theirs)
      expect((await poll(cappedApi.otherKey)).statusCode).toBe(404);

      controllers[0]!.abort();
      await waitFor(() => capped.size() === 2, 30_000, 25, 'a slot freed');
      const readmitted = cappedApi.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}?wait=1`, headers: cappedApi.auth() });
      expect((await readmitted).statusCode).toBe(200);
      for (const controller of controllers) controller.abort();
      await Promise.all(open);
    } finally {
      await capped.close();
      await cappedApi.close();
    }
  });

  it('a waiter wakes after its subscription connection was killed (re-listen, then sweep)', async () => {
    const jobId = await runningJob();
    const pending = longPoll(jobId);
    await openWaiters(1);
    const killed = await api.db.sql`
      select pg_terminate_backend(pid) as ok from pg_stat_activity
       where datname = current_database() and application_name = 'long-poll-test' and query ilike 'listen%'`;
    expect(killed.length).toBe(1);
    // postgres.js re-listens on a fresh connection; the re-listen sweeps once
    await waitFor(
      async () =>
        (
          await api.db
            .sql`select 1 from pg_stat_activity where datname = current_database() and application_name = 'long-poll-test' and query ilike 'listen%'`
        ).length === 1,
      30_000,
      50,
      're-listen',
    );
    await transitionJob(api.db.db, jobId, ['summarizing'], { status: 'completed', finishedAt: new Date() });
    expect((await pending).json().status).toBe('completed');
  });

  it("another conversation's read keeps its latency while 2000 long-polls wait", async () => {
    const jobId = await runningJob();
    const other = `c-${conversationSeq + 1}`;
    await conversation();
    const n = 2000;
    const pending = Array.from({ length: n }, () => longPoll(jobId));
    await openWaiters(n);
    await settled();
    const timings: number[] = [];
    for (let i = 0; i < 40; i++) {
      const started = performance.now();
      const res = await api.app.inject({ method: 'GET', url: `/v1/conversations/${other}`, headers: api.auth() });
      timings.push(performance.now() - started);
      expect(res.statusCode).toBe(200);
    }
    timings.sort((a, b) => a - b);
    const p50 = timings[Math.floor(timings.length / 2)]!;
    const max = timings.at(-1)!;
    console.log(`read beside ${n} long-polls: p50 ${p50.toFixed(1)} ms, max ${max.toFixed(1)} ms`);
    await transitionJob(api.db.db, jobId, ['summarizing'], { status: 'completed', finishedAt: new Date() });
    expect((await Promise.all(pending)).every((res) => res.json().status === 'completed')).toBe(true);
    // the code before: p50 1233 ms, max 2136 ms on this scenario (issue 26); generous bounds on a shared machine
    expect(p50).toBeLessThan(200);
    expect(max).toBeLessThan(2_000);
  });

  it.each(['the sweep', 'shutdown'] as const)("%s never hands a job to another tenant's waiter who knows its id", async (path) => {
    // The waiter's own first read (which answers a foreign job as not found) is held back, so
    // the read of `path`, shared by every waiter of the job, reaches the waiter first.
    let releaseFirstRead = () => {};
    const firstReadHeld = new Promise<void>((resolve) => (releaseFirstRead = resolve));
    let reads = 0;
    const held = createJobWaiters({
      readJobs: async (ids) => {
        if (reads++ === 0) await firstReadHeld;
        return getJobsByIds(counted.db, ids);
      },
      subscribe: (handlers) => subscribeJobStatus(counted.sql, handlers),
      ping: (nonce) => pingJobStatusChannel(counted.sql, nonce),
      logger: pino({ level: 'silent' }),
      maxWaitersPerTenant: 10,
      resyncEveryMs: path === 'the sweep' ? 200 : SWEEP_MS,
    });
    try {
      const jobId = await runningJob();
      await transitionJob(api.db.db, jobId, ['summarizing'], { status: 'completed', finishedAt: new Date(), result: {} });
      const otherTenantId = (await findTenantByApiKey(api.db.db, api.otherKey))!.tenantId;
      const answer = held.wait({ tenantId: otherTenantId, jobId, waitMs: 30_000, signal: new AbortController().signal });
      await waitFor(() => held.size() === 1 && reads === 1, 10_000, 10, 'waiter with its first read held');
      if (path === 'shutdown') await held.close();
      expect(await answer).toBeNull();
      releaseFirstRead();
      // the job's own tenant still gets it
      expect((await held.wait({ tenantId, jobId, waitMs: 1_000, signal: new AbortController().signal }))?.status).toBe('completed');
    } finally {
      releaseFirstRead();
      await held.close();
    }
  });

  it('a lost notification costs a sweep period, not the whole wait', async () => {
    const sweeping = createJobWaitersFor(counted.db, counted.sql, {
      logger: pino({ level: 'silent' }),
      maxWaitersPerTenant: 10,
      resyncEveryMs: 500,
    });
    try {
      const jobId = await runningJob();
      const pending = sweeping.wait({ tenantId, jobId, waitMs: 50_000, signal: new AbortController().signal });
      await waitFor(() => sweeping.size() === 1, 10_000, 25, 'waiter');
      // a change that is never announced: triggers do not fire for a replica session
      await api.db.db.transaction(async (tx) => {
        await tx.execute(sql`set local session_replication_role = replica`);
        await transitionJob(tx, jobId, ['summarizing'], { status: 'completed', finishedAt: new Date() });
      });
      const started = Date.now();
      expect((await pending)?.status).toBe('completed');
      expect(Date.now() - started).toBeLessThan(20_000);
    } finally {
      await sweeping.close();
    }
  });
});
