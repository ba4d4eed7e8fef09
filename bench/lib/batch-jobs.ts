import type { NormalizedMessage } from '../../src/compaction/types.js';
import type { BenchContext } from './context.js';

/** Helpers for scenarios that run many conversations at once. */

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T, i);
    }
  });
  await Promise.all(lanes);
  return out;
}

/** Creates `count` conversations (auto off) of `make(i)` messages, a few appends in flight at once. */
export async function seedMany(
  ctx: BenchContext,
  prefix: string,
  count: number,
  make: (i: number, id: string) => NormalizedMessage[],
  policy: Record<string, unknown> = {},
): Promise<string[]> {
  const ids = Array.from({ length: count }, () => ctx.uniqueId(prefix));
  await pool(ids, 4, async (id, i) => {
    await ctx.svc.api.createConversation(id, { policy: { auto: false, ...policy } });
    await ctx.svc.api.append(id, make(i, id));
  });
  return ids;
}

export interface BatchOutcome {
  jobIds: string[];
  /** first job created → last job finished (server clocks) */
  spanMs: number;
  /** first plan step started → last job finished: the drain rate of the worker */
  drainMs: number;
  /** time the client took to enqueue every job */
  enqueueMs: number;
  statuses: Record<string, number>;
}

/** Enqueues a compaction on every conversation (16 requests in flight) and waits until all are terminal. */
export async function compactAll(
  ctx: BenchContext,
  ids: readonly string[],
  options: Record<string, unknown>,
  timeoutMs: number,
): Promise<BatchOutcome> {
  const t0 = performance.now();
  const jobIds = await pool(ids, 16, async (id) => (await ctx.svc.api.compact(id, options)).id);
  const enqueueMs = performance.now() - t0;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await ctx.svc.sql<Array<{ active: number }>>`
      select count(*) filter (where status in ('queued','planning','summarizing','resummarizing','committing'))::int as active
      from compaction_jobs where id = any(${ctx.svc.sql.array(jobIds)}::uuid[])`;
    if ((row?.active ?? 1) === 0) break;
    if (Date.now() > deadline) throw new Error(`${row?.active} of ${jobIds.length} jobs still active after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const [span] = await ctx.svc.sql<Array<{ first_created: number; first_started: number; last_finished: number }>>`
    select extract(epoch from min(created_at)) * 1000 as first_created,
           extract(epoch from min(started_at)) * 1000 as first_started,
           extract(epoch from max(finished_at)) * 1000 as last_finished
    from compaction_jobs where id = any(${ctx.svc.sql.array(jobIds)}::uuid[])`;
  const statuses = await ctx.svc.sql<Array<{ status: string; n: number }>>`
    select status, count(*)::int as n from compaction_jobs where id = any(${ctx.svc.sql.array(jobIds)}::uuid[]) group by status`;
  return {
    jobIds,
    spanMs: Number(span?.last_finished) - Number(span?.first_created),
    drainMs: Number(span?.last_finished) - Number(span?.first_started),
    enqueueMs,
    statuses: Object.fromEntries(statuses.map((s) => [s.status, s.n])),
  };
}
