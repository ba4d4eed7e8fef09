import os from 'node:os';

import { compactAll, seedMany } from '../lib/batch-jobs.js';
import { type BenchContext, settleDatabase } from '../lib/context.js';
import { syntheticMessages } from '../lib/conversations.js';
import { cpuShares, perUnit } from '../lib/cpu-shares.js';
import { watchCpuByRole } from '../lib/cpu-time.js';
import { profileWorker } from '../lib/profiling.js';
import { emptyScenario, figure, type ScenarioResult, target } from '../lib/result.js';
import { round, spread } from '../lib/stats.js';

/**
 * Scenario 4: compactions per second through one worker process with an instant LLM, and
 * how LLM-bound work scales with the summarize queue's concurrency under the Haiku-like profile.
 */

const MESSAGES = 200;

export async function runThroughput(ctx: BenchContext): Promise<ScenarioResult[]> {
  const started = performance.now();
  const result = emptyScenario('throughput', '4. Throughput: compactions per second, one worker process');
  const count = ctx.quick ? 20 : 1_000;
  const runs = ctx.quick ? 1 : 2;
  result.setup = {
    profile: 'instant (4a), haiku (4b; quick: fixed:200)',
    conversations: `${count} × ${MESSAGES} messages, "chat" mix (~118 tokens per message)`,
    worker: 'one `compactd worker` process, COMPACTD_COMPACTION_CONCURRENCY 8, COMPACTD_SUMMARIZE_CONCURRENCY 32 (defaults)',
    runs,
    measure: 'compactions / (first job created → last job finished); all jobs enqueued at once, 16 POSTs in flight',
  };
  ctx.svc.sim.configure({ profile: 'instant', summarizeWindow: null });
  const rates: number[] = [];
  const drainRates: number[] = [];
  const rss: number[] = [];
  const cpuRuns: Array<Record<string, number>> = [];
  for (let run = 0; run < runs; run += 1) {
    await settleDatabase(ctx);
    ctx.log(`throughput: seeding ${count} conversations (run ${run + 1}/${runs})`);
    const ids = await seedMany(ctx, 'tp', count, (i, id) => syntheticMessages(MESSAGES, { mix: 'chat', seed: i + 1, tag: id }));
    const worker = await ctx.svc.startWorker();
    ctx.svc.sim.reset();
    ctx.log(`throughput: compacting ${count}`);
    const stopCpu = watchCpuByRole({
      'compactd worker': worker.pid,
      'compactd API': ctx.svc.apiChild.pid,
      'bench client + llm-sim': process.pid,
    });
    const outcome = await compactAll(ctx, ids, { strategy: 'summarize' }, 900_000);
    cpuRuns.push(perUnit(stopCpu(), count, 1000));
    if ((outcome.statuses['completed'] ?? 0) !== count) throw new Error(`throughput: statuses ${JSON.stringify(outcome.statuses)}`);
    rates.push(count / (outcome.spanMs / 1000));
    drainRates.push(count / (outcome.drainMs / 1000));
    rss.push((worker.memory()?.peakRssKb ?? Number.NaN) / 1024);
    result.notes.push(
      `Run ${run + 1}: ${count} jobs, ${ctx.svc.sim.callLog().length} LLM calls, enqueue took ${round(outcome.enqueueMs / 1000, 2)} s, span ${round(outcome.spanMs / 1000, 2)} s.`,
    );
  }
  result.figures.push(figure('compactions/s (created → finished)', '/s', rates));
  result.figures.push(figure('compactions/s (first plan start → last finish)', '/s', drainRates));
  result.figures.push(figure('worker peak RSS', 'MB', rss));
  result.targets.push(target('median compactions/s, one worker', '>=', 150, spread(rates).median, '/s'));
  const cpuTable = cpuByProcessTable(cpuRuns);
  result.tables.push(cpuTable.table);
  if (!(result.targets[0]?.met ?? true)) {
    const ids = await seedMany(ctx, 'tpprof', ctx.quick ? 10 : 200, (i, id) =>
      syntheticMessages(MESSAGES, { mix: 'chat', seed: i + 1, tag: id }),
    );
    const profile = await profileWorker(ctx, 'throughput', async () => {
      await compactAll(ctx, ids, { strategy: 'summarize' }, 900_000);
    });
    const text = profile?.text ?? 'the profile could not be read';
    if (result.targets[0]) result.targets[0].bottleneck = `${cpuTable.summary} Worker ${text}`;
    result.notes.push(`Profiled rerun (${ids.length} compactions, worker with --cpu-prof): ${text}`);
  }
  result.tables.push(await concurrencySweep(ctx));
  result.durationMs = performance.now() - started;
  return [result];
}

/**
 * 4c: the CPU of one compaction, by process. Every process shares the machine's cores, so the
 * sum bounds the rate: cores × 1000 / (ms per compaction) compactions/s at best.
 */
function cpuByProcessTable(runs: ReadonlyArray<Record<string, number>>) {
  const shares = cpuShares(runs);
  const [top] = [...shares.roles].sort((a, b) => shares.median(b) - shares.median(a));
  const cores = os.availableParallelism();
  const summary =
    `CPU per compaction, all processes: ${round(shares.total, 1)} ms, the most in ${top} (${round(shares.median(top ?? ''), 1)} ms); ` +
    `${cores} cores allow at most ${round((cores * 1000) / shares.total, 0)} compactions/s at that cost.`;
  return {
    summary,
    table: {
      title: '4c. CPU per compaction by process (ms, median over runs; instant LLM)',
      columns: ['process', 'CPU ms per compaction', 'share'],
      rows: shares.rows,
    },
  };
}

/** 4b: the same jobs with summarize concurrency 1, 8 and 32 under an LLM with real latency. */
async function concurrencySweep(ctx: BenchContext) {
  const profile = ctx.quick ? 'fixed:200' : 'haiku';
  const jobs = ctx.quick ? 3 : 6;
  // a small output budget keeps each Haiku-like call near 5 s, so concurrency 1 finishes in minutes
  const policy = { summaryMaxTokens: 300 };
  ctx.svc.sim.configure({ profile });
  const rows: Array<Array<string | number>> = [];
  for (const concurrency of [1, 8, 32]) {
    ctx.log(`throughput: summarize concurrency ${concurrency} (${profile}, ${jobs} jobs)`);
    const ids = await seedMany(
      ctx,
      `tpc${concurrency}`,
      jobs,
      (i, id) => syntheticMessages(MESSAGES, { mix: 'chat', seed: i + 1, tag: id }),
      policy,
    );
    await ctx.svc.startWorker({ COMPACTD_SUMMARIZE_CONCURRENCY: String(concurrency) });
    ctx.svc.sim.reset();
    const outcome = await compactAll(ctx, ids, { strategy: 'summarize' }, 1_800_000);
    const calls = ctx.svc.sim.callLog();
    rows.push([
      concurrency,
      jobs,
      calls.length,
      Math.max(...calls.map((c) => c.concurrencyAtStart)),
      round(outcome.spanMs / 1000, 1),
      round(jobs / (outcome.spanMs / 1000), 3),
      JSON.stringify(outcome.statuses),
    ]);
  }
  ctx.svc.sim.configure({ profile: 'instant' });
  await ctx.svc.stopWorker();
  return {
    title: `4b. Summarize concurrency under the ${profile} profile (${jobs} jobs of ${MESSAGES} messages, summaryMaxTokens 300)`,
    columns: ['summarize concurrency', 'jobs', 'LLM calls', 'max calls in flight', 'span s', 'compactions/s', 'statuses'],
    rows,
  };
}
