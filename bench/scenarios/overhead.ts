import { assertCompleted, type BenchContext, compactMeasured, type MeasuredJob, seedConversation, settleDatabase } from '../lib/context.js';
import { syntheticMessages } from '../lib/conversations.js';
import { perUnit } from '../lib/cpu-shares.js';
import { watchCpuByRole } from '../lib/cpu-time.js';
import type { JobPhases } from '../lib/job-timing.js';
import { profileWorker } from '../lib/profiling.js';
import { emptyScenario, figure, type ScenarioResult, target } from '../lib/result.js';
import { round, spread } from '../lib/stats.js';

/**
 * Scenario 3: what compactd itself costs per compaction, with an LLM that answers at once
 * (llm-sim `instant`). Non-LLM time = job wall time minus the time during which at least
 * one LLM call was in flight; phases from the job row, the worker log and the call log.
 */

const SIZES = (quick: boolean) =>
  quick
    ? [
        { messages: 200, runs: 3, targetMs: 25 },
        // quick mode is a smoke run: half the large size, same target
        { messages: 5_000, runs: 1, targetMs: 400 },
      ]
    : [
        { messages: 200, runs: 10, targetMs: 25 },
        { messages: 10_000, runs: 3, targetMs: 400 },
      ];

const WARM_UP_JOBS = 10;

async function warmUp(ctx: BenchContext): Promise<void> {
  ctx.log(`overhead: warming the worker up (${WARM_UP_JOBS} compactions)`);
  for (let run = 0; run < WARM_UP_JOBS; run += 1) {
    const id = ctx.uniqueId('ovhwarm');
    await seedConversation(ctx, id, syntheticMessages(200, { mix: 'chat', seed: 1_000 + run, tag: id }));
    assertCompleted(await compactMeasured(ctx, id), 'overhead warm-up');
  }
}

const PHASES: Array<[keyof JobPhases, string]> = [
  ['toPlanMs', 'API insert → plan step starts'],
  ['planMs', 'plan (load, plan, persist)'],
  ['fanOutMs', 'plan persisted → first LLM call'],
  ['llmWindowMs', 'first → last LLM call end'],
  ['toCommitMs', 'last LLM call → commit starts'],
  ['commitMs', 'commit transaction'],
];

export async function runOverhead(ctx: BenchContext): Promise<ScenarioResult[]> {
  const started = performance.now();
  const result = emptyScenario('overhead', '3. Overhead: non-LLM time per compaction');
  ctx.svc.sim.configure({ profile: 'instant', summarizeWindow: null });
  const worker = await ctx.svc.startWorker();
  const cpuRows: Array<Array<string | number>> = [];
  let cpuColumns: string[] = [];
  const cpuSummaries: string[] = [];
  result.setup = {
    profile: 'instant',
    conversations: 'synthetic coding-agent turns, "chat" mix (~410 bytes, ~118 tokens per message)',
    strategy: 'summarize, default policy',
    jobs: 'one at a time',
    nonLlm: 'wall (created_at → finished_at) minus the union of LLM call intervals',
    warmUp: `${WARM_UP_JOBS} untimed 200-message compactions first: a service runs warm, and a fresh process compiles its code on the first jobs`,
  };
  await settleDatabase(ctx);
  await warmUp(ctx);
  const rows: Array<Array<string | number>> = [];
  for (const size of SIZES(ctx.quick)) {
    ctx.log(`overhead: ${size.messages} messages × ${size.runs}`);
    const ids: string[] = [];
    for (let run = 0; run < size.runs; run += 1) {
      const id = ctx.uniqueId(`ovh${size.messages}`);
      await seedConversation(ctx, id, syntheticMessages(size.messages, { mix: 'chat', seed: run + 1, tag: id }));
      ids.push(id);
    }
    const jobs: MeasuredJob[] = [];
    const stopCpu = watchCpuByRole({
      'compactd worker': worker.pid,
      'compactd API': ctx.svc.apiChild.pid,
      'bench client + llm-sim': process.pid,
    });
    for (const id of ids) {
      const job = await compactMeasured(ctx, id);
      assertCompleted(job, `overhead ${size.messages}`);
      jobs.push(job);
    }
    const cpuMs = Object.entries(perUnit(stopCpu(), jobs.length, 1000));
    cpuColumns = cpuMs.map(([role]) => role);
    cpuRows.push([size.messages, ...cpuMs.map(([, ms]) => round(ms, 1))]);
    const wallMedian = spread(jobs.map((j) => j.timing.wallMs)).median;
    cpuSummaries.push(
      `${size.messages} messages, per job of ${round(wallMedian, 0)} ms wall (jobs one at a time, instant LLM): ` +
        cpuMs.map(([role, ms]) => `${role} ${round(ms, 1)} ms CPU`).join(', ') +
        ' (all threads of each process; chunk steps overlap, so the sum can exceed the wall).',
    );
    const nonLlm = jobs.map((j) => j.timing.nonLlmMs);
    result.figures.push(figure(`non-LLM time, ${size.messages} messages`, 'ms', nonLlm));
    result.targets.push(target(`median non-LLM time, ${size.messages} messages`, '<=', size.targetMs, spread(nonLlm).median, 'ms'));
    const phase = (key: keyof JobPhases) => spread(jobs.map((j) => j.timing.phases?.[key] ?? Number.NaN)).median;
    rows.push([
      size.messages,
      spread(jobs.map((j) => j.timing.chunks)).median,
      ...PHASES.map(([key]) => round(phase(key), 1)),
      round(spread(jobs.map((j) => j.timing.llm?.llmUnionMs ?? 0)).median, 1),
      round(spread(jobs.map((j) => j.timing.wallMs)).median, 1),
      round(spread(nonLlm).median, 1),
    ]);
  }
  result.tables.push({
    title: 'CPU per compaction by process (ms, all threads; jobs run one at a time)',
    columns: ['messages', ...cpuColumns],
    rows: cpuRows,
  });
  result.tables.push({
    title: 'Phases (ms, median over runs)',
    columns: ['messages', 'chunks', ...PHASES.map(([, label]) => label), 'LLM in flight', 'wall', 'non-LLM'],
    rows,
  });
  result.notes.push(
    'Phases overlap the LLM window: "first → last LLM call end" includes queue hops between parallel chunk steps and the re-summary when there is one. ' +
      'Non-LLM time counts only time during which no call was in flight.',
  );
  if (ctx.quick)
    result.notes.push(
      'Quick mode: 3 × 200 and 1 × 5,000 messages (the full run measures 10 × 200 and 3 × 10,000 against the same targets).',
    );
  if (result.targets.some((t) => !t.met)) await explain(ctx, result, cpuSummaries);
  result.durationMs = performance.now() - started;
  return [result];
}

/** A profiled rerun of both sizes; the hottest areas name the bottleneck of each missed target. */
async function explain(ctx: BenchContext, result: ScenarioResult, cpuSummaries: readonly string[]): Promise<void> {
  const sizes = [{ messages: 200 }, { messages: ctx.quick ? 1_000 : 10_000 }];
  const ids: string[] = [];
  for (const size of sizes) {
    const id = ctx.uniqueId(`ovhprof${size.messages}`);
    await seedConversation(ctx, id, syntheticMessages(size.messages, { mix: 'chat', seed: 99, tag: id }));
    ids.push(id);
  }
  const profile = await profileWorker(ctx, 'overhead', async () => {
    for (const id of ids) assertCompleted(await compactMeasured(ctx, id), 'overhead profile');
  });
  const text = profile ? profile.text : 'the profile could not be read';
  result.targets.forEach((t, i) => {
    if (!t.met) t.bottleneck = `${cpuSummaries[i] ?? ''} Worker ${text}`;
  });
  result.notes.push(
    `Profiled rerun (worker with --cpu-prof, one 200-message compaction and one ${sizes[1]?.messages ?? 0}-message compaction): ${text}`,
  );
}
