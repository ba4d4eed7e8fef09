import { randomUUID } from 'node:crypto';

import { Job, type Queue } from 'bullmq';

import type { RedisConnection } from './connection.js';
import { type TenantSlotCaps, tenantSlotCaps } from './fair-share.js';
import { queuePrefix } from './names.js';
import { runScript } from './redis-script.js';

/**
 * A tenant's share of a provider's call slots, held by its summarize steps across every worker
 * process (Redis). The fair-share tags (fair-share.ts) order the queue, but a queue's order
 * stops mattering once a flooding tenant's steps hold every worker slot and every provider
 * slot: BullMQ fetches greedily, a fetched step would wait for a provider slot while keeping
 * its worker slot, and in-flight calls are not preempted, so the next tenant waited for the
 * flood's calls to end (measured 1.4–2.85× its quiet time under the default concurrency).
 *
 * Here a summarize step takes a slot before its calls:
 * - at most `slots` steps per provider hold one at once (COMPACTD_LLM_CONCURRENCY, the same
 *   number the provider limiter allows, so a step that holds one rarely waits there);
 * - one tenant holds at most `caps.shared` of them while another tenant has been active within
 *   `activeWindowMs` (all of them while it is alone: a tenant alone keeps full throughput);
 * - a step that finds no slot while other tenants are active is parked: the worker moves it to
 *   delayed (its worker slot is free for the next tenant's step at once) and it is recorded with
 *   its fair-share tag; when a slot is released the parked steps are promoted back to the queue
 *   lowest tag first. A tenant alone has nobody to free its worker slots for: its step waits for
 *   a slot where it is, polling as the provider limiter does, which costs no extra queue moves
 *   (and parks as soon as another tenant shows up).
 *
 * Slots are leases renewed while the step runs: a killed process's slot is free again after
 * `leaseTtlMs`. A promotion lost to a crash or a race costs a parked step at most `parkMs`: its
 * delay ends and it comes back on its own. Nothing here decides whether a step exists.
 */

export interface FairSlotsOptions {
  /** the queue prefix (COMPACTD_QUEUE_PREFIX); keys share the queues' hash slot */
  prefix: string;
  /** steps holding a slot at once, per provider */
  slots: number;
  /** slots one tenant leaves to the others while they are active (COMPACTD_TENANT_RESERVED_LLM_SLOTS) */
  reserve: number;
  /** a tenant counts as active this long after its last step asked for a slot; default 5 min */
  activeWindowMs?: number;
  /** a dead process's slot is free again after this long; default 10 s (about BullMQ's stalled-step lock) */
  leaseTtlMs?: number;
  /** how long a parked step stays delayed if no release promotes it (a lost promotion's cost); default 20 s, plus up to half of it at random */
  parkMs?: number;
  /** upper bound of one wait between attempts while a tenant alone waits for a slot; default 100 ms */
  maxPollMs?: number;
}

/** One summarize step asking for a slot: its BullMQ id and fair-share tag (priority). */
export interface FairTurn {
  provider: string;
  tenantId: string;
  stepId: string;
  priority: number;
}

export type SlotEntry = { kind: 'admitted'; leave(): Promise<void> } | { kind: 'parked'; parkMs: number };

export interface FairSlots {
  /** a slot (waiting for one while the tenant is alone), or `parked`; aborting the signal ends a wait */
  enter(turn: FairTurn, signal?: AbortSignal): Promise<SlotEntry>;
  /** slots held per tenant (expired leases excluded), for tests and metrics */
  held(provider: string): Promise<Record<string, number>>;
  /** parked step ids, lowest tag first */
  parked(provider: string): Promise<string[]>;
}

/** Handed to the queue boundary: move this step to delayed for `delayMs`, no attempt spent. */
export class ParkStep extends Error {
  constructor(readonly delayMs: number) {
    super(`no LLM slot free for this tenant; step parked for up to ${delayMs} ms`);
    this.name = 'ParkStep';
  }
}

/** Waits `ms`; an aborted signal ends the wait at once with its reason (the step was cancelled). */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(signal.reason as Error);
    const done = () => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const aborted = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

export const DEFAULT_ACTIVE_WINDOW_MS = 5 * 60_000;
/** parked entries a release looks at for tenants under their cap (lowest tags first) */
const SCAN_LIMIT = 64;
const SEP = '|';

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

// Slots held per tenant, and the cap that applies to a tenant (others active lately: shared).
const HELPERS = `
local function tenantOf(member) return string.sub(member, 1, string.find(member, '${SEP}', 1, true) - 1) end
local function heldBy(leases)
  local held = {}
  for _, m in ipairs(leases) do local t = tenantOf(m); held[t] = (held[t] or 0) + 1 end
  return held
end
local function capFor(seenKey, tenant, now, window, alone, shared)
  local active = redis.call('ZCOUNT', seenKey, now - window, '+inf')
  local last = redis.call('ZSCORE', seenKey, tenant)
  if last and tonumber(last) >= now - window then active = active - 1 end
  if active > 0 then return shared, true end
  return alone, false
end
`;

// KEYS: leases, parked, seen. ARGV: lease, parked member, tag, slots, alone, shared, ttl, window.
// Returns 1 when the slot was taken, 0 when the step was recorded as parked (other tenants are
// active), -1 when it should wait and ask again (its tenant is alone).
const ENTER = `${NOW}${HELPERS}
local slots, alone, shared = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local ttl, window = tonumber(ARGV[7]), tonumber(ARGV[8])
local tenant = tenantOf(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local cap, others = capFor(KEYS[3], tenant, now, window, alone, shared)
redis.call('ZADD', KEYS[3], now, tenant)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - window)
redis.call('PEXPIRE', KEYS[3], window * 2)
local leases = redis.call('ZRANGE', KEYS[1], 0, -1)
if #leases < slots and (heldBy(leases)[tenant] or 0) < cap then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ttl * 2)
  redis.call('ZREM', KEYS[2], ARGV[2])
  return 1
end
if not others then return -1 end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
redis.call('PEXPIRE', KEYS[2], 3600000)
return 0
`;

// KEYS: leases, parked, seen. ARGV: lease, slots, alone, shared, window, scan limit.
// Releases the lease and returns the parked members to promote into the slots now free.
const LEAVE = `${NOW}${HELPERS}
local slots, alone, shared, window = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local leases = redis.call('ZRANGE', KEYS[1], 0, -1)
local free = slots - #leases
local picked = {}
if free <= 0 then return picked end
local held = heldBy(leases)
for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, tonumber(ARGV[6]) - 1)) do
  local tenant = tenantOf(m)
  if (held[tenant] or 0) < capFor(KEYS[3], tenant, now, window, alone, shared) then
    held[tenant] = (held[tenant] or 0) + 1
    picked[#picked + 1] = m
    redis.call('ZREM', KEYS[2], m)
    if #picked >= free then break end
  end
end
return picked
`;

// A lease that already expired is not resurrected (its slot may be taken).
const RENEW = `${NOW}
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
return 0
`;

const HELD = `${NOW}
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
`;

export function createFairSlots(redis: RedisConnection, queue: Queue, options: FairSlotsOptions): FairSlots {
  const caps: TenantSlotCaps = tenantSlotCaps(options.slots, options.reserve);
  const windowMs = options.activeWindowMs ?? DEFAULT_ACTIVE_WINDOW_MS;
  const leaseTtlMs = options.leaseTtlMs ?? 10_000;
  const parkMs = options.parkMs ?? 20_000;
  const maxPollMs = options.maxPollMs ?? 100;
  const keys = (provider: string): [string, string, string] => {
    const base = `${queuePrefix(options.prefix)}:slots:${provider}`;
    return [`${base}:leases`, `${base}:parked`, `${base}:seen`];
  };

  async function promote(members: string[]): Promise<void> {
    for (const member of members) {
      const stepId = member.slice(member.indexOf(SEP) + 1);
      // A step is recorded as parked just before its worker moves it to delayed: give it a moment.
      for (let attempt = 0; attempt < 4; attempt += 1) {
        const job = await Job.fromId(queue, stepId);
        if (!job) break;
        const state = await job.getState();
        if (state === 'delayed') {
          await job.promote().catch(() => {
            // promoted by its delay meanwhile, or removed: nothing left to do
          });
          break;
        }
        if (state !== 'active') break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
  }

  return {
    async enter(turn, signal) {
      const [leasesKey, parkedKey, seenKey] = keys(turn.provider);
      const lease = `${turn.tenantId}${SEP}${randomUUID()}`;
      const member = `${turn.tenantId}${SEP}${turn.stepId}`;
      for (;;) {
        const taken = Number(
          await runScript(
            redis,
            ENTER,
            3,
            leasesKey,
            parkedKey,
            seenKey,
            lease,
            member,
            turn.priority,
            caps.alone,
            caps.alone,
            caps.shared,
            leaseTtlMs,
            windowMs,
          ),
        );
        if (taken === 1) break;
        // parked steps come back at slightly different times, not as one wave
        if (taken === 0) return { kind: 'parked', parkMs: Math.round(parkMs * (1 + Math.random() * 0.5)) };
        // Releases are not announced to a waiting step; jitter keeps waiting steps out of lockstep.
        await pause(Math.round(maxPollMs * (0.5 + Math.random() * 0.5)), signal);
      }
      const renewal = setInterval(
        () => {
          runScript(redis, RENEW, 1, leasesKey, lease, leaseTtlMs).catch(() => {
            // A failed renewal only shortens the lease; the step itself is unaffected.
          });
        },
        Math.max(50, Math.floor(leaseTtlMs / 3)),
      );
      renewal.unref();
      let left: Promise<void> | undefined;
      return {
        kind: 'admitted',
        leave: () =>
          (left ??= (async () => {
            clearInterval(renewal);
            const members = (await runScript(
              redis,
              LEAVE,
              3,
              leasesKey,
              parkedKey,
              seenKey,
              lease,
              caps.alone,
              caps.alone,
              caps.shared,
              windowMs,
              SCAN_LIMIT,
            )) as string[];
            await promote(members);
          })().catch(() => {
            // Unreachable Redis: the lease expires on its own, and parked steps come back after parkMs.
          })),
      };
    },
    async held(provider) {
      const leases = (await runScript(redis, HELD, 1, keys(provider)[0])) as string[];
      const held: Record<string, number> = {};
      for (const lease of leases) {
        const tenant = lease.slice(0, lease.indexOf(SEP));
        held[tenant] = (held[tenant] ?? 0) + 1;
      }
      return held;
    },
    async parked(provider) {
      const members = await redis.zrange(keys(provider)[1], '0', '-1');
      return members.map((member) => member.slice(member.indexOf(SEP) + 1));
    },
  };
}
