import type { Redis } from 'ioredis';

import { type QueueName, queuePrefix } from './names.js';
import { runScript } from './redis-script.js';

/**
 * Fair share across tenants, with BullMQ's own priorities (per-tenant groups are not in the
 * open-source BullMQ). Start-time fair queuing: every queue has a virtual clock, the highest
 * tag a worker has started; each step gets tag max(clock, its tenant's last tag) + 1 and the
 * queue serves the lowest tag first (FIFO among equal tags). A tenant's backlog therefore
 * holds tags far ahead of the clock, and a tenant with nothing queued starts right at the
 * clock: its step is taken after at most one step of each other tenant, however deep their
 * backlogs. Within one tenant, tags only grow: its steps keep their order.
 *
 * Tags only order work; they never decide whether it exists. A step is enqueued exactly as
 * before (same BullMQ id, same Postgres row behind it), so a process dying between tagging
 * and adding, or a lost hash, loses nothing: at worst one step is served a little out of turn.
 */

/** BullMQ's highest priority value (2^21 - 1); a tag beyond it is served FIFO with the others there. */
export const MAX_PRIORITY = 2 ** 21 - 1;
/** Above this clock, the sweep starts the tags over once the queue has nothing waiting (see rebaseFairShare). */
export const REBASE_AT = 2 ** 20;

const CLOCK_FIELD = '@clock';

/** One hash per queue: the clock, and each tenant's last tag. */
export function fairShareKey(prefix: string, queue: QueueName): string {
  return `${queuePrefix(prefix)}:fair:${queue}`;
}

// Returns the first of `count` consecutive tags for the tenant.
const TAG = `
local clock = tonumber(redis.call('HGET', KEYS[1], '${CLOCK_FIELD}') or '0')
local last = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local start = math.max(clock, last)
redis.call('HSET', KEYS[1], ARGV[1], start + tonumber(ARGV[2]))
return start + 1
`;

const ADVANCE = `
local clock = tonumber(redis.call('HGET', KEYS[1], '${CLOCK_FIELD}') or '0')
if tonumber(ARGV[1]) > clock then redis.call('HSET', KEYS[1], '${CLOCK_FIELD}', ARGV[1]) end
return 0
`;

export interface FairShareQueues {
  redis: Pick<Redis, 'eval' | 'evalsha' | 'hget' | 'del'>;
  prefix: string;
}

/** Tags for `count` steps of one tenant, as BullMQ priorities (consecutive, capped at MAX_PRIORITY). */
export async function fairPriorities(queues: FairShareQueues, queue: QueueName, tenantId: string, count = 1): Promise<number[]> {
  if (count <= 0) return [];
  const first = Number(await runScript(queues.redis, TAG, 1, fairShareKey(queues.prefix, queue), tenantId, count));
  return Array.from({ length: count }, (_, i) => Math.min(MAX_PRIORITY, first + i));
}

export async function fairPriority(queues: FairShareQueues, queue: QueueName, tenantId: string): Promise<number> {
  const [priority] = await fairPriorities(queues, queue, tenantId, 1);
  return priority ?? MAX_PRIORITY;
}

/** A worker started a step of this priority: the clock moves up to it. */
export async function advanceFairClock(queues: FairShareQueues, queue: QueueName, priority: number | undefined): Promise<void> {
  if (priority === undefined || priority <= 0) return;
  await runScript(queues.redis, ADVANCE, 1, fairShareKey(queues.prefix, queue), priority);
}

/**
 * Tags only grow, and BullMQ priorities end at 2^21. Once the clock is past REBASE_AT and the
 * queue has nothing waiting or delayed (no tag left to compare with), the hash is dropped and
 * tags start over from 1. Called by the maintenance sweep.
 */
export async function rebaseFairShare(
  queues: FairShareQueues,
  queue: {
    name: string;
    waitUntilReady(): Promise<void>;
    getJobCounts(...types: Array<'wait' | 'prioritized' | 'delayed' | 'waiting-children'>): Promise<Record<string, number>>;
  },
): Promise<boolean> {
  await queue.waitUntilReady();
  const key = fairShareKey(queues.prefix, queue.name as QueueName);
  const clock = Number((await queues.redis.hget(key, CLOCK_FIELD)) ?? 0);
  if (clock < REBASE_AT) return false;
  const counts = await queue.getJobCounts('wait', 'prioritized', 'delayed', 'waiting-children');
  if (Object.values(counts).some((n) => n > 0)) return false;
  await queues.redis.del(key);
  return true;
}

/** How many of a provider's call slots one tenant may hold (queue/fair-slots.ts enforces it). */
export interface TenantSlotCaps {
  /** while no other tenant has been active lately: every slot (a tenant alone keeps full throughput) */
  alone: number;
  /** while another tenant has: all but the reserve, so a newcomer's first steps start at once */
  shared: number;
}

/**
 * In-flight calls are never preempted, so a tenant whose steps hold every slot makes the next
 * tenant wait for one of its calls to end (up to a whole call). Keeping `reserve` slots out of
 * any one tenant's reach, while others are about, lets a newcomer's first `reserve` steps start
 * at once. The reserve never takes a tenant's last slot: it is at most `slots - 1`.
 */
export function tenantSlotCaps(slots: number, reserve: number): TenantSlotCaps {
  const total = Math.max(1, Math.floor(slots));
  const kept = Math.min(Math.max(0, Math.floor(reserve)), total - 1);
  return { alone: total, shared: total - kept };
}
