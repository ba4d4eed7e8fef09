import { randomUUID } from 'node:crypto';

import { type Job, Worker } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';

import { TEST_REDIS_URL } from '../../../harness/service-urls.js';
import { waitFor } from '../../../harness/wait-for.js';
import { deleteQueueKeys } from '../../../src/queue/cleanup.js';
import { createProducerConnection, createWorkerConnection, type RedisConnection } from '../../../src/queue/connection.js';
import { advanceFairClock, fairShareKey, MAX_PRIORITY, REBASE_AT, rebaseFairShare } from '../../../src/queue/fair-share.js';
import { type QueueName, queuePrefix, QUEUES } from '../../../src/queue/names.js';
import { closeQueues, createQueues, enqueueCompaction, enqueueSummarizeFlow, type Queues } from '../../../src/queue/producer.js';

/**
 * One tenant's backlog never starves another's: the order in which real BullMQ workers take
 * steps, over real Redis, interleaves tenants. Asserted on dispatch order, not on time.
 */

let opened: Array<{ queues: Queues; workers: Worker[]; connections: RedisConnection[] }> = [];
afterEach(async () => {
  for (const { queues, workers, connections } of opened) {
    await Promise.all(workers.map((w) => w.close()));
    await closeQueues(queues);
    for (const c of connections) c.disconnect();
    await deleteQueueKeys(TEST_REDIS_URL, queues.prefix);
  }
  opened = [];
});

function setup() {
  const prefix = `fair${randomUUID().replaceAll('-', '').slice(0, 10)}`;
  const producer = createProducerConnection(TEST_REDIS_URL);
  const queues = createQueues(producer, prefix);
  const entry = { queues, workers: [] as Worker[], connections: [producer] as RedisConnection[] };
  opened.push(entry);
  /** A worker taking one step at a time and noting its job id, moving the clock as the real workers do. */
  const record = (queue: QueueName, taken: string[]) => {
    const connection = createWorkerConnection(TEST_REDIS_URL);
    entry.connections.push(connection);
    const worker = new Worker(
      queue,
      async (job: Job) => {
        await advanceFairClock(queues, queue, job.opts.priority);
        taken.push(job.id!);
      },
      { connection, prefix: queuePrefix(prefix), concurrency: 1 },
    );
    entry.workers.push(worker);
    return worker;
  };
  return { queues, record };
}

const jobs = (n: number, tenantId: string) => Array.from({ length: n }, () => ({ id: randomUUID(), tenantId }));

describe('fair share across tenants', () => {
  it("serves tenant A's compaction right after the step in progress, not behind tenant B's 200 queued ones", async () => {
    const { queues, record } = setup();
    const flood = jobs(200, 'tenant-b');
    for (const job of flood) await enqueueCompaction(queues, job);
    const [lone] = jobs(1, 'tenant-a');
    await enqueueCompaction(queues, lone!);

    const taken: string[] = [];
    record(QUEUES.compaction, taken);
    await waitFor(() => taken.length === 201, 60_000);
    expect(taken.indexOf(lone!.id)).toBeLessThanOrEqual(1);
    // tenant B's own steps keep their order
    expect(taken.filter((id) => id !== lone!.id)).toEqual(flood.map((j) => j.id));
  });

  it('lets a tenant that arrives mid-flood in at once', async () => {
    const { queues, record } = setup();
    for (const job of jobs(200, 'tenant-b')) await enqueueCompaction(queues, job);
    const taken: string[] = [];
    record(QUEUES.compaction, taken);
    await waitFor(() => taken.length >= 100, 60_000);
    const [late] = jobs(1, 'tenant-a');
    const before = taken.length;
    await enqueueCompaction(queues, late!);
    await waitFor(() => taken.includes(late!.id), 60_000);
    // the worker may already hold the next step (BullMQ fetches it with the previous completion)
    expect(taken.indexOf(late!.id) - before).toBeLessThanOrEqual(3);
  });

  it("interleaves tenant A's chunks with tenant B's hundreds", async () => {
    const { queues, record } = setup();
    for (const job of jobs(50, 'tenant-b')) await enqueueSummarizeFlow(queues, job, 4);
    const [lone] = jobs(1, 'tenant-a');
    await enqueueSummarizeFlow(queues, lone!, 4);

    const taken: string[] = [];
    record(QUEUES.summarize, taken);
    await waitFor(() => taken.length === 204, 60_000);
    const positions = [0, 1, 2, 3].map((i) => taken.indexOf(`${lone!.id}-chunk-${i}`));
    // round robin: B, A, B, A, …: A's fourth chunk is the eighth step at the latest
    expect(Math.max(...positions)).toBeLessThanOrEqual(7);
  });

  it('starts the tags over once the clock is high and nothing waits', async () => {
    const { queues } = setup();
    const key = fairShareKey(queues.prefix, QUEUES.compaction);
    await queues.compaction.waitUntilReady();
    await queues.redis.hset(key, '@clock', String(REBASE_AT + 5), 'tenant-b', String(REBASE_AT + 9));
    await enqueueCompaction(queues, { id: randomUUID(), tenantId: 'tenant-b' });
    expect(await rebaseFairShare(queues, queues.compaction)).toBe(false);
    await queues.compaction.obliterate({ force: true });
    expect(await rebaseFairShare(queues, queues.compaction)).toBe(true);
    expect(await queues.redis.exists(key)).toBe(0);
    const job = { id: randomUUID(), tenantId: 'tenant-b' };
    await enqueueCompaction(queues, job);
    expect((await queues.compaction.getJob(job.id))?.opts.priority).toBe(1);
    expect(MAX_PRIORITY).toBe(2 ** 21 - 1);
  });
});
