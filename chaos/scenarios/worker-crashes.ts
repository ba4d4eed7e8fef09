import { startAppender } from '../lib/appender.js';
import { pickConversations } from '../lib/corpus.js';
import { startDrive } from '../lib/driver.js';
import { apiCalls, injectHttp } from '../lib/http.js';
import { AppendLedger, waitForTerminalJobs } from '../lib/invariants.js';
import { createWorkerPool, type KillMode, type KillRecord, killWorkers } from '../lib/killer.js';
import { watchQueues } from '../lib/orphans.js';
import { recordCrashes, recordOutcome, spreadOverRequests } from '../lib/outcome.js';
import { percentile, pickRandom, round, ScenarioRecorder, type ScenarioResult, seededRandom } from '../lib/result.js';
import { seedConversations } from '../lib/seed.js';
import { createSimFleet, simEnv } from '../lib/sims.js';
import { startChaosStack } from '../lib/stack.js';

/**
 * Issue 10 §1: compactions of real-transcript conversations while SIGKILLs hit worker
 * processes (children running `compactd worker`) at random moments, appends continuing.
 */

export interface WorkerCrashOptions {
  variant: 'quick' | 'full';
  compactions: number;
  kills: number;
  workers: number;
  /** compactions running at once */
  concurrent: number;
  appendsPerSecond: number;
  /** llm-sim latency profile */
  profile: string;
  seed: number;
  /** the whole scenario must end within this */
  boundMs: number;
  logDir?: string;
}

export const WORKER_CRASHES_FULL: WorkerCrashOptions = {
  variant: 'full',
  compactions: 100,
  kills: 24,
  workers: 3,
  concurrent: 6,
  appendsPerSecond: 5,
  profile: 'fixed:1000',
  seed: 10,
  boundMs: 30 * 60_000,
};
export const WORKER_CRASHES_QUICK: WorkerCrashOptions = {
  variant: 'quick',
  compactions: 6,
  kills: 3,
  workers: 2,
  concurrent: 3,
  appendsPerSecond: 5,
  profile: 'fixed:600',
  seed: 10,
  boundMs: 150_000,
};

const POLICY = { auto: false, chunkTokens: 2_000, summaryMaxTokens: 400, maxLiveBatches: 3, keepRecent: 6 };
const KILL_MODES: KillMode[] = ['llm', 'fleet', 'random'];
const RESUME_BOUND_MS = 60_000;
/** time for a worker to persist an answer it received (an answer younger than this at a kill was in flight) */
const PERSIST_GRACE_MS = 2_000;

export async function runWorkerCrashes(options: WorkerCrashOptions): Promise<ScenarioResult> {
  const rec = new ScenarioRecorder('worker-crashes', 'Worker crashes (SIGKILL) during compactions', options.variant);
  const random = seededRandom(options.seed);
  const stack = await startChaosStack(options.logDir ? { logDir: options.logDir } : {});
  const fleet = createSimFleet({ profile: options.profile });
  const watch = watchQueues(stack.redis.url, stack.prefix);
  const pool = createWorkerPool(stack, fleet, simEnv);
  try {
    const http = injectHttp((await stack.inlineApp()).app, stack.keys.tenant);
    const ledger = new AppendLedger();
    const conversationIds = await seedConversations(apiCalls(http), ledger, 'crash', pickConversations(options.compactions), POLICY);
    await Promise.all(Array.from({ length: options.workers }, pool.start));

    const kills: KillRecord[] = [];
    const deadline = Date.now() + options.boundMs;
    const killDeps = {
      db: stack.db.db,
      watch,
      live: pool.live,
      replace: pool.replace,
      inFlight: (w: string) => fleet.inFlight(w),
      random,
      resumeBoundMs: RESUME_BOUND_MS,
    };
    // Each kill comes 0.5–2.5 s after its compaction request, so kills spread over the run.
    const schedule = spreadOverRequests(options.compactions, options.kills, async (k) => {
      await new Promise((resolve) => setTimeout(resolve, 500 + random() * 2_000));
      kills.push(await killWorkers(KILL_MODES[k % KILL_MODES.length] as KillMode, killDeps));
    });
    const drive = startDrive({
      db: stack.db.db,
      http,
      conversationIds,
      concurrent: options.concurrent,
      body: { strategy: 'summarize' },
      deadline,
      onRequested: schedule.onRequested,
    });
    const appender = startAppender(http, ledger, () => pickRandom(drive.runningConversations(), random), {
      ratePerSecond: options.appendsPerSecond,
    });
    await drive.done;
    await schedule.settled();
    const stillActive = await waitForTerminalJobs(stack.db.db, Math.max(5_000, deadline - Date.now()));
    const appends = await appender.stop();
    await recordKills(rec, options, kills);
    await recordOutcome(rec, {
      db: stack.db.db,
      ledger,
      appends,
      requested: drive.state.requested,
      expectedRequests: options.compactions,
      stillActive,
      calls: fleet.calls(),
      disruptions: [...pool.killedAt].map(([worker, at]) => ({ worker, fromMs: at, untilMs: Number.POSITIVE_INFINITY })),
      graceMs: PERSIST_GRACE_MS,
    });
    recordCrashes(rec, stack.crashes);
    rec.expect('replacement workers that failed to start', pool.replacementErrors.length, '==', 0);
    describeRun(rec, options);
  } finally {
    pool.close();
    await watch.close();
    await stack.close();
    await fleet.close();
  }
  return rec.finish();
}

async function recordKills(rec: ScenarioRecorder, options: WorkerCrashOptions, kills: KillRecord[]): Promise<void> {
  rec.expect(
    'SIGKILLs',
    kills.reduce((n, k) => n + k.workers.length, 0),
    '>=',
    options.kills,
  );
  for (const mode of KILL_MODES) rec.figure(`kill moments: ${mode}`, kills.filter((k) => k.mode === mode).length);
  const perKill = await Promise.all(kills.map(async (kill) => ({ kill, fates: await kill.fates })));
  const fates = perKill.flatMap((k) => k.fates.filter((f) => f.orphaned));
  for (const step of ['plan', 'summarize-chunk', 'finalize'])
    rec.figure(`steps orphaned: ${step}`, fates.filter((f) => f.step.name === step).length);
  const phases = new Map<string, number>();
  for (const { kill, fates: held } of perKill) {
    for (const fate of held.filter((f) => f.orphaned)) {
      const status = fate.step.jobId ? (kill.statuses[fate.step.jobId] ?? 'gone') : 'n/a';
      phases.set(status, (phases.get(status) ?? 0) + 1);
    }
  }
  rec.figure('orphaned steps by job status at kill', [...phases].map(([s, n]) => `${s} ${n}`).join(', ') || 'none');
  // Each `llm` kill hits a worker with a call in flight, so it orphans at least one step.
  rec.expect('steps orphaned by the kills', fates.length, '>=', kills.filter((k) => k.mode === 'llm').length);
  const resumed = fates.flatMap((f) => (f.resumedAfterMs === null ? [] : [f.resumedAfterMs]));
  rec.expect('orphaned steps never resumed', fates.length - resumed.length, '==', 0);
  for (const f of fates.filter((x) => x.resumedAfterMs === null).slice(0, 5)) {
    rec.note(
      `NOT RESUMED within ${RESUME_BOUND_MS} ms: ${f.step.queue}/${f.step.name} ${f.step.id} (job ${f.step.jobId ?? '-'}), state ${f.stateAtBound ?? '?'}`,
    );
  }
  rec.expect('kill → resumption, max (ms)', resumed.length > 0 ? Math.max(...resumed) : 0, '<=', 15_000);
  rec.figure('kill → resumption, p50 (ms)', resumed.length > 0 ? percentile(resumed, 50) : 0);
  const detectedAt = fates.flatMap((f) => (f.detectedAfterMs === null ? [] : [f.detectedAfterMs]));
  rec.figure(
    'kill → step back in the queue (stall check), max / p50 (ms)',
    detectedAt.length > 0 ? `${Math.max(...detectedAt)} / ${percentile(detectedAt, 50)}` : 'n/a',
  );
  for (const mode of KILL_MODES) {
    const times = perKill
      .filter((k) => k.kill.mode === mode)
      .flatMap((k) => k.fates.flatMap((f) => (f.orphaned && f.resumedAfterMs !== null ? [f.resumedAfterMs] : [])));
    rec.figure(`kill → resumption, max after ${mode} kills (ms)`, times.length > 0 ? Math.max(...times) : 0);
  }
}

function describeRun(rec: ScenarioRecorder, options: WorkerCrashOptions): void {
  rec.figure('wall time (s)', round((Date.now() - Date.parse(rec.finish().startedAt)) / 1000));
  rec.note(
    `${options.compactions} compactions (strategy summarize, ${options.concurrent} at a time) of conversations from the shared real transcripts, ` +
      `${options.workers} worker processes, llm-sim profile ${options.profile} (one sim per worker, so each call is attributed to its process), ` +
      `appends at ${options.appendsPerSecond}/s to conversations being compacted; policy ${JSON.stringify(POLICY)}.`,
  );
  rec.note(
    'Kill moments cycle through: llm (a worker with an LLM call in flight), fleet (every worker, the moment a job is planning or committing), ' +
      'random (any worker). Killed workers are replaced at once. A step is orphaned when its BullMQ processedBy names the killed process; ' +
      'resumption is the time from the kill until another worker took the step (its processedOn); it includes the stall check (the step back in ' +
      'the queue, seen by its stalledCounter) and any wait for a free worker slot.',
  );
  rec.note(
    `A repeated LLM call is a successful call whose identical request had been answered before; it is allowed only when that answer arrived ` +
      `within ${PERSIST_GRACE_MS} ms before its own worker was killed, or after (in flight: not yet persisted, or never read).`,
  );
}
