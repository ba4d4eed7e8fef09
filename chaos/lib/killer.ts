import { sql } from 'drizzle-orm';

import type { CompactdProcess } from '../../harness/index.js';
import type { Db } from '../../src/db/client.js';
import { type QueueWatch, type StepFate, workerName } from './orphans.js';

/**
 * SIGKILLs worker processes at moments chosen three ways, so kills land in every phase:
 * - `llm`: a worker with an LLM call in flight (mid-summarize, or mid-re-summary in finalize);
 * - `random`: any live worker, whatever it is doing;
 * - `fleet`: every worker at once, the moment a job is planning or committing (the
 *   DB-bound steps last milliseconds, so only a whole-fleet crash reliably hits them).
 * Killed workers are replaced at once; the steps they held (by BullMQ `processedBy`) are
 * tracked until another worker takes them.
 */

export type KillMode = 'llm' | 'random' | 'fleet';

export interface KillRecord {
  mode: KillMode;
  at: number;
  workers: string[];
  /** job statuses (Postgres) of active jobs at the kill */
  statuses: Record<string, string>;
  fates: Promise<StepFate[]>;
}

export interface KillerDeps {
  db: Db;
  watch: QueueWatch;
  live(): CompactdProcess[];
  /** starts a replacement worker (not awaited by the kill itself) */
  replace(killed: CompactdProcess): Promise<unknown>;
  inFlight(worker: string): number;
  random(): number;
  /** how long to wait for a killed step to resume before calling it lost */
  resumeBoundMs: number;
}

async function activeStatuses(db: Db): Promise<Record<string, string>> {
  const rows = await db.execute<{ id: string; status: string }>(
    sql`select id, status from compaction_jobs where status in ('queued','planning','summarizing','resummarizing','committing')`,
  );
  return Object.fromEntries(rows.map((r) => [r.id, r.status]));
}

async function waitUntil(predicate: () => boolean | Promise<boolean>, timeoutMs: number, intervalMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return true;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return false;
}

/** Picks the victims for `mode` (waiting, bounded, for the right moment) and kills them. */
export async function killWorkers(mode: KillMode, deps: KillerDeps): Promise<KillRecord> {
  let victims: CompactdProcess[];
  // After a fleet kill the replacements may still be starting.
  await waitUntil(() => deps.live().length > 0, 60_000, 50);
  if (mode === 'llm') {
    await waitUntil(() => deps.live().some((w) => deps.inFlight(w.name) > 0), 10_000, 20);
    const busy = deps.live().filter((w) => deps.inFlight(w.name) > 0);
    const pool = busy.length > 0 ? busy : deps.live();
    victims = [pool[Math.floor(deps.random() * pool.length)] as CompactdProcess];
  } else if (mode === 'random') {
    const pool = deps.live();
    victims = [pool[Math.floor(deps.random() * pool.length)] as CompactdProcess];
  } else {
    await waitUntil(
      async () => Object.values(await activeStatuses(deps.db)).some((s) => s === 'planning' || s === 'committing'),
      15_000,
      5,
    );
    victims = deps.live();
  }
  const [steps, statuses] = await Promise.all([deps.watch.active(), activeStatuses(deps.db)]);
  const names = new Set(victims.map((w) => workerName(w.pid)));
  const held = steps.filter((s) => s.processedBy !== null && names.has(s.processedBy));
  const at = Date.now();
  await Promise.all(victims.map((w) => w.kill('SIGKILL')));
  for (const victim of victims) void deps.replace(victim);
  return { mode, at, workers: victims.map((w) => w.name), statuses, fates: deps.watch.resumption(held, at, deps.resumeBoundMs) };
}

/**
 * The live worker processes of a suite, each with its own llm-sim (so calls are attributed
 * to processes); a killed worker is replaced by a new one with a new sim.
 */
export function createWorkerPool(
  stack: { startWorker(env: Record<string, string>, name: string): Promise<CompactdProcess> },
  fleet: { add(name: string): Promise<{ url: string }> },
  simEnvOf: (sim: { url: string }) => Record<string, string>,
) {
  const live = new Set<CompactdProcess>();
  const killedAt = new Map<string, number>();
  const replacementErrors: string[] = [];
  let closing = false;
  let started = 0;
  const start = async () => {
    const name = `worker-${++started}`;
    const proc = await stack.startWorker(simEnvOf(await fleet.add(name)), name);
    live.add(proc);
    return proc;
  };
  return {
    live: () => [...live],
    killedAt,
    replacementErrors,
    start,
    async replace(killed: CompactdProcess) {
      live.delete(killed);
      killedAt.set(killed.name, killed.killedAt ?? Date.now());
      // A replacement still starting when the suite closes is killed with the rest.
      await start().catch((error: unknown) => {
        if (!closing) replacementErrors.push(error instanceof Error ? error.message : String(error));
      });
    },
    close() {
      closing = true;
    },
  };
}
