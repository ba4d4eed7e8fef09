import os from 'node:os';

import type { ApiClient } from '../lib/api-client.js';
import { compactAll, pool, seedMany } from '../lib/batch-jobs.js';
import type { BenchContext } from '../lib/context.js';
import { syntheticMessages } from '../lib/conversations.js';
import { type CpuSpan, watchCpu } from '../lib/cpu-time.js';
import { emptyScenario, figure, fmt, type ScenarioResult, type Table } from '../lib/result.js';
import { spread } from '../lib/stats.js';
import { measureRowSizes } from '../lib/storage.js';
import { platformEstimate } from './scale-out-arithmetic.js';

/**
 * Scenario 8: compactions/s with 1, 2 and 4 worker processes (instant LLM) and ingest msg/s
 * with 1, 2 and 4 API processes, all sharing one Postgres and one Redis on this machine; CPU
 * time per unit of work from /proc; then the arithmetic for one million conversations.
 */

export const SCALE_OUT_TITLE = '8. Scale-out: worker and API processes, and the arithmetic for 1M conversations';
const PROCESS_COUNTS = [1, 2, 4] as const;
const MESSAGES = 200;
const BATCH = 500;
const INGEST_CLIENTS = 4;

interface Point {
  processes: number;
  rate: number;
  cpu: CpuSpan;
  units: number;
}

export async function runScaleOut(ctx: BenchContext): Promise<ScenarioResult[]> {
  const started = performance.now();
  const result = emptyScenario('scale-out', SCALE_OUT_TITLE);
  const conversations = ctx.quick ? 12 : 240;
  const perClient = ctx.quick ? 1_000 : 5_000;
  const runs = ctx.quick ? 1 : 2;
  result.setup = {
    compactions: `8a: ${conversations} conversations × ${MESSAGES} "chat" messages per point, instant LLM, all enqueued at once; compactions / (first job created → last job finished)`,
    ingest: `8b: ${INGEST_CLIENTS} clients in all, each appending ${perClient} "agent" messages in batches of ${BATCH} to its own conversation; clients spread round-robin over the API processes`,
    processes: `${PROCESS_COUNTS.join(', ')} worker processes (8a) or API processes (8b), one Postgres and one Redis shared by all`,
    cpu: 'process CPU = user + system time of the measured compactd processes (/proc/<pid>/stat); machine cores busy = every process on the machine, Postgres, Redis, llm-sim and the bench client included',
    runs,
  };
  ctx.svc.sim.configure({ profile: 'instant', summarizeWindow: null });
  const compactionPoints: Point[] = [];
  const ingestPoints: Point[] = [];
  for (let run = 0; run < runs; run += 1) {
    for (const processes of PROCESS_COUNTS) compactionPoints.push(await compactionPoint(ctx, processes, conversations, run));
    await ctx.svc.stopWorker();
    for (const processes of PROCESS_COUNTS) ingestPoints.push(await ingestPoint(ctx, processes, perClient, run));
  }
  await ctx.svc.stopExtraApis();

  for (const processes of PROCESS_COUNTS) {
    result.figures.push(
      figure(`compactions/s, ${processes} worker process${processes > 1 ? 'es' : ''}`, '/s', ratesOf(compactionPoints, processes)),
    );
  }
  for (const processes of PROCESS_COUNTS) {
    result.figures.push(
      figure(`messages/s, ${processes} API process${processes > 1 ? 'es' : ''}`, 'msg/s', ratesOf(ingestPoints, processes)),
    );
  }
  result.tables.push(
    pointTable(
      `8a. Compactions with an instant LLM, by worker processes (median of ${runs} run(s))`,
      'worker processes',
      'compactions/s',
      'worker CPU ms per compaction',
      1_000,
      compactionPoints,
    ),
  );
  result.tables.push(
    pointTable(
      `8b. Ingest through the append API, by API processes (median of ${runs} run(s))`,
      'API processes',
      'messages/s',
      'API CPU µs per message',
      1e6,
      ingestPoints,
    ),
  );

  const sizes = await measureRowSizes(ctx.svc.sql);
  const one = (points: Point[]) => points.filter((p) => p.processes === 1);
  const estimate = platformEstimate({
    compactionsPerSecondPerWorker: spread(ratesOf(compactionPoints, 1)).median,
    workerCpuSecondsPerCompaction: spread(one(compactionPoints).map(cpuPerUnit)).median,
    messagesPerSecondPerApi: spread(ratesOf(ingestPoints, 1)).median,
    apiCpuSecondsPerMessage: spread(one(ingestPoints).map(cpuPerUnit)).median,
    sizes,
  });
  result.tables.push(estimate.table);
  result.notes.push(coresNote(compactionPoints, ingestPoints));
  result.notes.push(estimate.paragraph);
  result.durationMs = performance.now() - started;
  return [result];
}

async function compactionPoint(ctx: BenchContext, processes: number, count: number, run: number): Promise<Point> {
  ctx.log(`scale-out: seeding ${count} conversations for ${processes} worker process(es) (run ${run + 1})`);
  const ids = await seedMany(ctx, `so${processes}`, count, (i, id) => syntheticMessages(MESSAGES, { mix: 'chat', seed: i + 1, tag: id }));
  const workers = await ctx.svc.startWorkers(processes);
  ctx.svc.sim.reset();
  ctx.log(`scale-out: compacting ${count} with ${processes} worker process(es)`);
  const stop = watchCpu(workers.map((w) => w.pid));
  const outcome = await compactAll(ctx, ids, { strategy: 'summarize' }, 900_000);
  const cpu = stop();
  if ((outcome.statuses['completed'] ?? 0) !== count)
    throw new Error(`scale-out: ${processes} workers: statuses ${JSON.stringify(outcome.statuses)}`);
  return { processes, rate: count / (outcome.spanMs / 1000), cpu, units: count };
}

async function ingestPoint(ctx: BenchContext, processes: number, perClient: number, run: number): Promise<Point> {
  const missing = processes - 1 - ctx.svc.extraApis.length;
  if (missing > 0) await ctx.svc.startExtraApis(missing);
  const apis: ApiClient[] = [ctx.svc.api, ...ctx.svc.extraApis.slice(0, processes - 1).map((a) => a.api)];
  const pids = [ctx.svc.apiChild.pid, ...ctx.svc.extraApis.slice(0, processes - 1).map((a) => a.child.pid)];
  const ids = Array.from({ length: INGEST_CLIENTS }, () => ctx.uniqueId(`soi${processes}`));
  const bodies = ids.map((id, c) => {
    const messages = syntheticMessages(perClient, { mix: 'agent', seed: 700 + c, tag: id });
    const out: string[] = [];
    for (let i = 0; i < messages.length; i += BATCH) out.push(JSON.stringify({ messages: messages.slice(i, i + BATCH) }));
    return out;
  });
  for (const id of ids) await ctx.svc.api.createConversation(id, { policy: { auto: false } });
  ctx.log(`scale-out: ingest, ${INGEST_CLIENTS} clients over ${processes} API process(es) (run ${run + 1})`);
  const stop = watchCpu(pids);
  const t0 = performance.now();
  await pool(ids, INGEST_CLIENTS, async (id, c) => {
    const api = apis[c % apis.length] as ApiClient;
    for (const body of bodies[c] as string[]) await api.appendBody(id, body);
  });
  const seconds = (performance.now() - t0) / 1000;
  const units = INGEST_CLIENTS * perClient;
  return { processes, rate: units / seconds, cpu: stop(), units };
}

function ratesOf(points: Point[], processes: number): number[] {
  return points.filter((p) => p.processes === processes).map((p) => p.rate);
}

function cpuPerUnit(p: Point): number {
  return p.cpu.processSeconds / p.units;
}

function pointTable(title: string, what: string, unit: string, cpuLabel: string, cpuScale: number, points: Point[]): Table {
  const base = spread(ratesOf(points, 1)).median;
  const rows = PROCESS_COUNTS.map((processes) => {
    const here = points.filter((p) => p.processes === processes);
    const rate = spread(here.map((p) => p.rate)).median;
    return [
      processes,
      fmt(rate),
      `${fmt(rate / base)}×`,
      fmt(spread(here.map(cpuPerUnit)).median * cpuScale),
      fmt(spread(here.map((p) => p.cpu.processSeconds / (p.units / p.rate))).median),
      fmt(spread(here.map((p) => p.cpu.machineCoresBusy)).median),
    ];
  });
  return { title, columns: [what, unit, 'vs 1 process', cpuLabel, 'cores used by these processes', 'machine cores busy'], rows };
}

/** What the core count of this machine limits, said with the numbers of this run. */
function coresNote(compactions: Point[], ingest: Point[]): string {
  const cores = os.cpus().length;
  const busiest = Math.max(...[...compactions, ...ingest].map((p) => p.cpu.machineCoresBusy).filter(Number.isFinite));
  const gain = (points: Point[], n: number) => fmt(spread(ratesOf(points, n)).median / spread(ratesOf(points, 1)).median);
  return (
    `This machine has ${cores} core(s), shared by the compactd processes, Postgres, Redis, llm-sim, the bench client (and other work on the machine). ` +
    `The busiest point kept ${fmt(busiest)} of them busy. Going from 1 to ${PROCESS_COUNTS.at(-1)} worker processes multiplied compactions/s by ${gain(compactions, PROCESS_COUNTS.at(-1) ?? 4)}, ` +
    `and going from 1 to ${PROCESS_COUNTS.at(-1)} API processes multiplied ingest by ${gain(ingest, PROCESS_COUNTS.at(-1) ?? 4)}: ` +
    `past ${cores} processes the extra ones only take turns on the same cores, and Postgres competes with them for every insert, so these points measure contention for ${cores} cores, not how far compactd scales. ` +
    'The per-unit CPU columns are the portable figures: on a platform each worker or API process gets its own core and Postgres its own machine, and the arithmetic below starts from those.'
  );
}
