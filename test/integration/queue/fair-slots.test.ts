import { randomUUID } from 'node:crypto';

import { afterEach, describe, expect, it } from 'vitest';

import { TEST_REDIS_URL } from '../../../harness/service-urls.js';
import { waitFor } from '../../../harness/wait-for.js';
import { deleteQueueKeys } from '../../../src/queue/cleanup.js';
import { createProducerConnection, createWorkerConnection, type RedisConnection } from '../../../src/queue/connection.js';
import { createFairSlots, type FairSlots, type FairSlotsOptions, type SlotEntry } from '../../../src/queue/fair-slots.js';
import { closeQueues, createQueues, type Queues } from '../../../src/queue/producer.js';

/**
 * A tenant's share of the provider slots, held in real Redis by real BullMQ steps. Each
 * `createFairSlots` has its own connection, as each worker process does.
 */

let opened: Array<{ queues: Queues; connections: RedisConnection[] }> = [];
afterEach(async () => {
  for (const { queues, connections } of opened) {
    await closeQueues(queues);
    for (const c of connections) c.disconnect();
    await deleteQueueKeys(TEST_REDIS_URL, queues.prefix);
  }
  opened = [];
});

function setup(options: Omit<FairSlotsOptions, 'prefix'>) {
  const prefix = `slots${randomUUID().replaceAll('-', '').slice(0, 10)}`;
  const producer = createProducerConnection(TEST_REDIS_URL);
  const queues = createQueues(producer, prefix);
  const entry = { queues, connections: [producer] as RedisConnection[] };
  opened.push(entry);
  /** a worker process's view of the slots, over its own connection */
  const process = (): { slots: FairSlots; connection: RedisConnection } => {
    const connection = createWorkerConnection(TEST_REDIS_URL);
    entry.connections.push(connection);
    return { slots: createFairSlots(connection, queues.summarize, { prefix, ...options }), connection };
  };
  return { queues, process };
}

let step = 0;
const turn = (tenantId: string, priority = 1) => ({ provider: 'anthropic', tenantId, stepId: `step-${++step}`, priority });
const admitted = (entries: SlotEntry[]) => entries.filter((e) => e.kind === 'admitted').length;

describe('fair slots', () => {
  it('lets a tenant alone hold every slot; its next step waits for one in place (nobody to free a worker slot for)', async () => {
    const { slots } = setup({ slots: 4, reserve: 2, maxPollMs: 10 }).process();
    const held = [];
    for (let i = 0; i < 4; i += 1) held.push(await slots.enter(turn('tenant-b')));
    expect(admitted(held)).toBe(4);
    let next: SlotEntry | undefined;
    const waiting = slots.enter(turn('tenant-b')).then((entry) => (next = entry));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(next).toBeUndefined();
    const [first] = held;
    if (first?.kind === 'admitted') await first.leave();
    await waiting;
    expect(next?.kind).toBe('admitted');
    expect(await slots.held('anthropic')).toEqual({ 'tenant-b': 4 });
    expect(await slots.parked('anthropic')).toEqual([]);
  });

  it("parks a waiting step as soon as another tenant shows up, so its worker slot serves the other's step", async () => {
    const { process } = setup({ slots: 2, reserve: 1, maxPollMs: 10 });
    const [one, two] = [process(), process()];
    await two.slots.enter(turn('tenant-b'));
    await two.slots.enter(turn('tenant-b'));
    const waiting = two.slots.enter({ provider: 'anthropic', tenantId: 'tenant-b', stepId: 'b-waiting', priority: 9 });
    expect((await one.slots.enter({ provider: 'anthropic', tenantId: 'tenant-a', stepId: 'a-first', priority: 3 })).kind).toBe('parked');
    expect((await waiting).kind).toBe('parked');
    expect(await one.slots.parked('anthropic')).toEqual(['a-first', 'b-waiting']);
  });

  it("keeps the reserve out of a flooding tenant's reach while another tenant is active, so the other's step starts at once", async () => {
    const { process } = setup({ slots: 4, reserve: 2 });
    const [one, two] = [process(), process()];
    const earlier = await one.slots.enter(turn('tenant-a'));
    if (earlier.kind === 'admitted') await earlier.leave();

    const flood = [];
    for (let i = 0; i < 6; i += 1) flood.push(await two.slots.enter(turn('tenant-b')));
    expect(admitted(flood)).toBe(2);
    const a = [await one.slots.enter(turn('tenant-a')), await one.slots.enter(turn('tenant-a'))];
    expect(a.map((e) => e.kind)).toEqual(['admitted', 'admitted']);
    expect(await one.slots.held('anthropic')).toEqual({ 'tenant-a': 2, 'tenant-b': 2 });
    // every slot is taken now: whoever asks next is parked
    expect((await one.slots.enter(turn('tenant-a'))).kind).toBe('parked');
  });

  it('promotes parked steps back into the queue lowest fair-share tag first, one per freed slot', async () => {
    const { queues, process } = setup({ slots: 2, reserve: 0 });
    const { slots } = process();
    const holders = [await slots.enter(turn('tenant-b')), await slots.enter(turn('tenant-b'))];
    // three parked steps, as the worker leaves them: delayed BullMQ jobs with their tags
    const tags = { late: 30, first: 10, second: 20 };
    for (const [id, priority] of Object.entries(tags)) {
      await queues.summarize.add('summarize-chunk', {}, { jobId: id, priority, delay: 600_000 });
      expect((await slots.enter({ provider: 'anthropic', tenantId: `tenant-${id}`, stepId: id, priority })).kind).toBe('parked');
    }
    expect(await slots.parked('anthropic')).toEqual(['first', 'second', 'late']);

    const [holder] = holders;
    if (holder?.kind === 'admitted') await holder.leave();
    expect(await (await queues.summarize.getJob('first'))?.getState()).toBe('prioritized');
    expect(await (await queues.summarize.getJob('second'))?.getState()).toBe('delayed');
    expect(await slots.parked('anthropic')).toEqual(['second', 'late']);
    // the promoted step takes the slot it was promoted into
    expect((await slots.enter({ provider: 'anthropic', tenantId: 'tenant-first', stepId: 'first', priority: 10 })).kind).toBe('admitted');
  });

  it("skips a parked step whose tenant is at its cap and promotes the next tenant's", async () => {
    const { queues, process } = setup({ slots: 3, reserve: 1 });
    const { slots } = process();
    await slots.enter(turn('tenant-a')).then((e) => (e.kind === 'admitted' ? e.leave() : undefined));
    const b = [await slots.enter(turn('tenant-b')), await slots.enter(turn('tenant-b'))];
    expect(admitted(b)).toBe(2);
    const c = await slots.enter(turn('tenant-c'));
    expect(c.kind).toBe('admitted');
    await queues.summarize.add('summarize-chunk', {}, { jobId: 'b-next', priority: 5, delay: 600_000 });
    await queues.summarize.add('summarize-chunk', {}, { jobId: 'a-next', priority: 7, delay: 600_000 });
    expect((await slots.enter({ provider: 'anthropic', tenantId: 'tenant-b', stepId: 'b-next', priority: 5 })).kind).toBe('parked');
    expect((await slots.enter({ provider: 'anthropic', tenantId: 'tenant-a', stepId: 'a-next', priority: 7 })).kind).toBe('parked');

    // C's slot frees; B still holds its cap of 2, so A's step goes first although its tag is higher
    if (c.kind === 'admitted') await c.leave();
    expect(await (await queues.summarize.getJob('a-next'))?.getState()).toBe('prioritized');
    expect(await (await queues.summarize.getJob('b-next'))?.getState()).toBe('delayed');
  });

  it("frees a dead process's slot once its lease expires", async () => {
    const { process } = setup({ slots: 1, reserve: 0, leaseTtlMs: 300 });
    const [dying, living] = [process(), process()];
    expect((await dying.slots.enter(turn('tenant-b'))).kind).toBe('admitted');
    expect((await living.slots.enter(turn('tenant-a'))).kind).toBe('parked');
    // the process dies: its renewals stop with its connection
    dying.connection.disconnect();
    await waitFor(async () => (await living.slots.enter(turn('tenant-a'))).kind === 'admitted', 10_000, 50, "the dead process's slot");
  });
});
