import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type CompactdProcess, spawnCompactd } from '../../../harness/compactd-process.js';
import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { type PrivateRedisCluster, startPrivateRedisCluster } from '../../../harness/private-redis-cluster.js';
import { loadRealTranscript } from '../../../harness/transcripts.js';
import { waitFor } from '../../../harness/wait-for.js';
import { ACTIVE_STATUS_SQL } from '../../../src/db/schema.js';
import { createRedisConnection } from '../../../src/queue/connection.js';
import { queuePrefix } from '../../../src/queue/names.js';
import { compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * The service on a real Redis Cluster (three masters, one replica each): the API in-process
 * and `compactd worker` child processes all given `REDIS_URL=redis+cluster://…`. A worker
 * killed mid-job is replaced; the master holding the queues' slot dies and its replica
 * takes over while the surviving worker keeps working; cancellations still reach it.
 */

const ADMIN_TOKEN = 'cluster-admin-token';
let cluster: PrivateRedisCluster;
let sim: TestLlmSim;
let stack: Stack;
const workers: CompactdProcess[] = [];

function startWorker(): CompactdProcess {
  const worker = spawnCompactd('worker', { ...stack.env, ANTHROPIC_BASE_URL: sim.url, COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5' });
  workers.push(worker);
  return worker;
}

beforeAll(async () => {
  cluster = await startPrivateRedisCluster();
  sim = await startTestLlmSim();
  stack = await createStack({ workers: false, env: { REDIS_URL: cluster.url, COMPACTD_ADMIN_TOKEN: ADMIN_TOKEN } });
});
afterAll(async () => {
  for (const worker of workers) worker.kill('SIGKILL');
  await Promise.all(workers.map((worker) => worker.exited));
  await stack?.close();
  await sim?.close();
  await cluster?.close();
});

const session = () => loadRealTranscript('spotter-claude-code/258c7280-ae70-4798-800f-63464d01a85d.jsonl').conversations[0]!.messages;

async function savedChunks(jobId: string): Promise<number> {
  const rows = await stack.db.db.execute<{ n: number }>(
    sql`select count(*)::int as n from compaction_chunks where job_id = ${jobId} and status = 'done'`,
  );
  return rows[0]?.n ?? 0;
}

/**
 * Waits until no job is active and no call is in flight: a finished compaction may enqueue a
 * follow-up consolidation whose calls must not run under the next test's latency profile.
 */
async function quiesce(): Promise<void> {
  await waitFor(
    async () => {
      const rows = await stack.db.db.execute<{ n: number }>(
        sql`select count(*)::int as n from compaction_jobs where status in ${ACTIVE_STATUS_SQL}`,
      );
      return rows[0]?.n === 0 && sim.control.inFlight() === 0;
    },
    120_000,
    100,
  );
}

/** Any key of the queues: all of them share the prefix's hash tag, hence one slot. */
const queueKey = () => `${queuePrefix(stack.prefix)}:compaction:meta`;

describe('on a Redis Cluster', () => {
  it('runs a compaction through API and worker processes; a worker killed mid-job is replaced and the job completes', async () => {
    sim.control.reset();
    sim.control.setProfile('fixed:1500');
    const messages = session();
    await seedConversation(stack, 'cluster-kill', messages, { policy: { auto: false, summaryMaxTokens: 4000 } });
    const first = startWorker();
    const job = await compact(stack, 'cluster-kill', { strategy: 'summarize' });
    await waitFor(async () => (await savedChunks(job.id)) >= 1 && sim.control.inFlight() > 0, 90_000, 20);
    first.kill('SIGKILL');
    await first.exited;
    startWorker();

    const done = await waitForJob(stack, job.id, 120_000);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');

    // The queues and the shared LLM limiter really live in the cluster (one slot each).
    const redis = createRedisConnection(cluster.url, { maxRetriesPerRequest: 1 });
    try {
      const owner = await cluster.ownerOf(queueKey());
      expect(cluster.ports).toContain(owner.master);
      expect(await redis.exists(`${queuePrefix(stack.prefix)}:compaction:meta`)).toBe(1);
      expect(await redis.exists(`${stack.prefix}:{llm:anthropic}:bucket`)).toBe(1);
    } finally {
      redis.disconnect();
    }
    // The readiness probe, the queue dashboard and the queue gauges read the same cluster.
    expect((await stack.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const board = await stack.app.inject({
      method: 'GET',
      url: '/admin/queues/api/queues',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(board.statusCode, board.body).toBe(200);
    const queues = (board.json() as { queues: Array<{ name: string; counts: Record<string, number> }> }).queues;
    expect(queues.find((queue) => queue.name === 'compaction')?.counts['completed']).toBeGreaterThan(0);
    const metrics = await stack.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/compactd_queue_jobs\{queue="summarize",state="completed"\} [1-9]/);
  });

  it('after the master holding the queues’ slot is killed and its replica promoted, the next compaction completes', async () => {
    await quiesce();
    sim.control.reset();
    sim.control.setProfile('instant');
    const before = await cluster.ownerOf(queueKey());
    const after = await cluster.killMaster(queueKey());
    expect(after.master).not.toBe(before.master);
    expect(before.replicas).toContain(after.master);

    // The API's health check follows the new slot map.
    await waitFor(async () => (await stack.app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200, 60_000, 200);
    await seedConversation(stack, 'cluster-failover', session(), { policy: { auto: false, summaryMaxTokens: 4000 } });
    const job = await compact(stack, 'cluster-failover', { strategy: 'summarize' });
    const done = await waitForJob(stack, job.id, 120_000);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(sim.control.callLog().filter((call) => call.outcome === 'ok').length).toBeGreaterThan(0);
    // the worker that was running before the failover did the work: no restart was needed
    expect(workers.filter((worker) => worker.child.exitCode === null && worker.child.signalCode === null)).toHaveLength(1);
  });

  it('a cancel published on the cluster reaches the worker and aborts its in-flight LLM calls', async () => {
    await quiesce();
    sim.control.reset();
    // calls that would outlast the test: only the cancellation can end them
    sim.control.setProfile('fixed:600000');
    await seedConversation(stack, 'cluster-cancel', session(), { policy: { auto: false, summaryMaxTokens: 4000 } });
    const job = await compact(stack, 'cluster-cancel', { strategy: 'summarize' });
    await waitFor(() => sim.control.inFlight() > 0, 60_000, 20);
    const cancelled = await stack.app.inject({ method: 'DELETE', url: `/v1/jobs/${job.id}`, headers: stack.auth() });
    expect(cancelled.statusCode, cancelled.body).toBe(200);

    await waitFor(() => sim.control.inFlight() === 0, 60_000, 50);
    const calls = sim.control.callLog();
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((call) => call.outcome === 'disconnected')).toBe(true);
    expect((await waitForJob(stack, job.id, 10_000)).status).toBe('cancelled');
  });
});
