import { assertCompleted, type BenchContext, compactMeasured, seedConversation, settleDatabase } from '../lib/context.js';
import { syntheticMessages } from '../lib/conversations.js';
import { type PhaseMemory, sampleMemoryByPhase } from '../lib/memory-by-phase.js';
import { profileWorker } from '../lib/profiling.js';
import { emptyScenario, figure, type ScenarioResult, target } from '../lib/result.js';
import { round, spread } from '../lib/stats.js';

/**
 * Scenario 6: one compaction of a small and of a ten times larger conversation, each in a
 * fresh worker process so its peak RSS (VmHWM) belongs to that job alone.
 */

export async function runScale(ctx: BenchContext): Promise<ScenarioResult[]> {
  const started = performance.now();
  const result = emptyScenario('scale', '6. Scale: job time vs conversation size, worker peak RSS');
  const sizes = ctx.quick
    ? [
        { messages: 1_000, runs: 1 },
        { messages: 5_000, runs: 1 },
      ]
    : [
        { messages: 10_000, runs: 2 },
        { messages: 100_000, runs: 2 },
      ];
  ctx.svc.sim.configure({ profile: 'instant', summarizeWindow: null });
  result.setup = {
    profile: 'instant',
    conversations: `${sizes.map((s) => s.messages).join(' and ')} messages, "chat" mix (~118 tokens per message)`,
    strategy: 'summarize, default policy',
    memory: 'VmHWM of the worker process, started fresh for each job',
    linear: 'time growth / size growth ≤ 1.25 is read as ~linear',
  };
  await settleDatabase(ctx);
  const rows: Array<Array<string | number>> = [];
  const idleAll: number[] = [];
  const peakBySize: number[] = [];
  const medians: number[] = [];
  const peaks: number[] = [];
  // RSS by job status for each size (the last run's samples): which step holds the memory
  const phasePeaks: Array<Record<string, PhaseMemory>> = [];
  for (const size of sizes) {
    const wall: number[] = [];
    const rss: number[] = [];
    const idle: number[] = [];
    let chunks = 0;
    let planKb = 0;
    for (let run = 0; run < size.runs; run += 1) {
      const id = ctx.uniqueId(`scale${size.messages}`);
      ctx.log(`scale: seeding ${size.messages} messages (run ${run + 1}/${size.runs})`);
      await seedConversation(ctx, id, syntheticMessages(size.messages, { mix: 'chat', seed: 7 + run, tag: id }));
      const worker = await ctx.svc.startWorker({ COMPACTD_METRICS_PORT: String(METRICS_PORT) });
      idle.push((worker.memory()?.rssKb ?? Number.NaN) / 1024);
      const stopSampling = sampleMemoryByPhase(ctx, worker, id, `http://127.0.0.1:${METRICS_PORT}/metrics`);
      const job = await compactMeasured(ctx, id);
      const byPhase = await stopSampling();
      if (run === size.runs - 1) phasePeaks.push(byPhase);
      assertCompleted(job, `scale ${size.messages}`);
      wall.push(job.timing.wallMs);
      rss.push((worker.memory()?.peakRssKb ?? Number.NaN) / 1024);
      chunks = job.timing.chunks;
      planKb = job.row.planBytes / 1024;
      await ctx.svc.stopWorker();
    }
    medians.push(spread(wall).median);
    idleAll.push(...idle);
    peakBySize.push(spread(rss).median);
    peaks.push(...rss);
    result.figures.push(
      figure(
        `job wall time, ${size.messages} messages`,
        's',
        wall.map((v) => v / 1000),
      ),
    );
    result.figures.push(figure(`worker peak RSS, ${size.messages} messages`, 'MB', rss));
    rows.push([
      size.messages,
      chunks,
      round(planKb, 0),
      round(spread(wall).median / 1000, 2),
      round(spread(wall).median / size.messages, 3),
      round(spread(idle).median, 0),
      round(spread(rss).median, 0),
    ]);
  }
  const idleMedian = spread(idleAll).median;
  const [small, large] = sizes;
  const growth = (medians[1] as number) / (medians[0] as number);
  const sizeRatio = (large?.messages ?? 1) / (small?.messages ?? 1);
  result.tables.push({
    title: 'Job time and memory by size (median)',
    columns: [
      'messages',
      'chunks',
      'plan KB (re-read by every step)',
      'wall s',
      'ms per message',
      'worker RSS when idle MB',
      'worker peak RSS MB',
    ],
    rows,
  });
  const statuses = [...new Set(phasePeaks.flatMap((p) => Object.keys(p)))];
  result.tables.push({
    title:
      'Worker memory by job status (MB, RSS / V8 heap in use: the highest sample every 100 ms while the job was in that status; last run of each size)',
    columns: ['messages', ...statuses],
    rows: sizes.map((size, i) => [size.messages, ...statuses.map((status) => memoryCell(phasePeaks[i]?.[status]))]),
  });
  result.notes.push(
    '"Idle" is the worker’s RSS right after it reported ready, before the job: the baseline every job starts from (the process runs the compiled dist/ through bin/compactd.mjs).',
  );
  result.figures.push(figure(`time growth for ${sizeRatio}× the messages (1.0 = linear)`, '×', [growth / sizeRatio]));
  result.targets.push(target(`time growth / size growth (${sizeRatio}×), ~linear`, '<=', 1.25, growth / sizeRatio, '×'));
  result.targets.push(target('worker peak RSS (largest conversation)', '<=', 256, Math.max(...peaks), 'MB'));
  if (result.targets.some((t) => !t.met)) {
    const id = ctx.uniqueId('scaleprof');
    // a 20,000-message job shows the same hot paths as a larger one, in a fraction of the time
    const messages = ctx.quick ? 2_000 : Math.min(large?.messages ?? 20_000, 20_000);
    await seedConversation(ctx, id, syntheticMessages(messages, { mix: 'chat', seed: 77, tag: id }));
    const profile = await profileWorker(ctx, 'scale', async () => {
      assertCompleted(await compactMeasured(ctx, id), 'scale profile');
    });
    const text = profile?.text ?? 'the profile could not be read';
    for (const t of result.targets) if (!t.met) t.bottleneck = text;
    const rssTarget = result.targets[1];
    if (rssTarget && !rssTarget.met) {
      rssTarget.bottleneck =
        `memory, not CPU: an idle worker already holds ${round(idleMedian, 0)} MB (the compiled service plus every dependency), ` +
        `and the peak grows from ${round(peakBySize[0] ?? Number.NaN, 0)} MB at ${small?.messages} messages to ${round(peakBySize[1] ?? Number.NaN, 0)} MB at ${large?.messages}: ` +
        `the growth comes with the job; sampled by job status, the largest job's RSS peaks while it is ${peakStatus(phasePeaks.at(-1) ?? {})}.`;
    }
    result.notes.push(`Profiled rerun (${messages} messages, worker with --cpu-prof): ${text}`);
  }
  if (ctx.quick)
    result.notes.push(
      'Quick mode: 1,000 and 5,000 messages instead of 10,000 and 100,000 (a smoke run: the linearity check compares a 5× growth).',
    );
  result.durationMs = performance.now() - started;
  return [result];
}

/** A free port for the scale workers' /metrics (one worker at a time). */
const METRICS_PORT = 19_464;

const memoryCell = (peak: PhaseMemory | undefined): string => (peak ? `${round(peak.rssMb, 0)} / ${round(peak.heapUsedMb, 0)}` : 'n/a');

/** The job status whose samples held the highest RSS, with its RSS and heap figures. */
function peakStatus(peaks: Record<string, PhaseMemory>): string {
  const [status, peak] = Object.entries(peaks).sort((a, b) => b[1].rssMb - a[1].rssMb)[0] ?? ['unknown', undefined];
  return `${status} (RSS ${round(peak?.rssMb ?? Number.NaN, 0)} MB, of which V8 heap in use ${round(peak?.heapUsedMb ?? Number.NaN, 0)} MB)`;
}
