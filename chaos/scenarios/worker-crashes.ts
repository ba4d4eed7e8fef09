import { startAppender } from '../lib/appender.js';
import { pickConversations } from '../lib/corpus.js';
import { apiCalls, injectHttp } from '../lib/http.js';
import { AppendLedger, checkHistories, checkState, jobStatusCounts, waitForTerminalJobs } from '../lib/invariants.js';
import { killWorkers, type KillMode, type KillRecord } from '../lib/killer.js';
import { watchQueues } from '../lib/orphans.js';
import type { CompactdProcess } from '../lib/processes.js';
import { startDrive } from '../lib/driver.js';
import { percentile, round, ScenarioRecorder, seededRandom, type ScenarioResult } from '../lib/result.js';
import { createSimFleet, repeatedCalls, simEnv } from '../lib/sims.js';
import { seedConversations } from '../lib/seed.js';
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
  variant: 'full', compactions: 100, kills: 24, workers: 3, concurrent: 6, appendsPerSecond: 5, profile: 'fixed:1000', seed: 10, boundMs: 30 * 60_000,
};
export const WORKER_CRASHES_QUICK: WorkerCrashOptions = {
  variant: 'quick', compactions: 6, kills: 3, workers: 2, concurrent: 3, appendsPerSecond: 5, profile: 'fixed:600', seed: 10, boundMs: 150_000,
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
  const live = new Set<CompactdProcess>();
  const replacementErrors: string[] = [];
  let closing = false;
  const killedAt = new Map<string, number>();
  const startWorker = async () => {
    const name = `worker-${killedAt.size + live.size + 1}-${Date.now() % 100_000}`;
    const sim = await fleet.add(name);
    const proc = await stack.startWorker(simEnv(sim), name);
    live.add(proc);
    return proc;
  };
  try {
    const inline = await stack.inlineApp();
    const http = injectHttp(inline.app, stack.keys.tenant);
    const api = apiCalls(http);
    const ledger = new AppendLedger();
    const conversationIds = await seedConversations(api, ledger, 'crash', pickConversations(options.compactions), POLICY);
    await Promise.all(Array.from({ length: options.workers }, startWorker));

    const kills: KillRecord[] = [];
    const deadline = Date.now() + options.boundMs;
    const killDeps = {
      db: stack.db.db,
      watch,
      live: () => [...live],
      replace: async (killed: CompactdProcess) => {
        live.delete(killed);
        killedAt.set(killed.name, killed.killedAt ?? Date.now());
        // A replacement still starting when the scenario closes is killed with the rest.
        await startWorker().catch((error: unknown) => {
          if (!closing) replacementErrors.push(error instanceof Error ? error.message : String(error));
        });
      },
      inFlight: (worker: string) => fleet.inFlight(worker),
      random,
      resumeBoundMs: RESUME_BOUND_MS,
    };
    // Kill k follows the request of compaction ⌊(k + ½)·N/K⌋ (after 0.5–2.5 s), so kills spread over the run.
    const killAfter = Array.from({ length: options.kills }, (_, k) => Math.floor(((k + 0.5) * options.compactions) / options.kills));
    let scheduled = 0;
    let killing: Promise<void> = Promise.resolve();
    const drive = startDrive({
      db: stack.db.db,
      http,
      conversationIds,
      concurrent: options.concurrent,
      body: { strategy: 'summarize' },
      deadline,
      onRequested: (n) => {
        while (scheduled < options.kills && n > (killAfter[scheduled] as number)) {
          const mode = KILL_MODES[scheduled % KILL_MODES.length] as KillMode;
          scheduled += 1;
          killing = killing.then(async () => {
            await new Promise((resolve) => setTimeout(resolve, 500 + random() * 2_000));
            kills.push(await killWorkers(mode, killDeps));
          });
        }
      },
    });
    const appender = startAppender(http, ledger, () => pickRandom(drive.runningConversations(), random), { ratePerSecond: options.appendsPerSecond });
    await drive.done;
    await killing;
    const stillActive = await waitForTerminalJobs(stack.db.db, Math.max(5_000, deadline - Date.now()));
    const appends = await appender.stop();
    await recordFigures(rec, { options, stack, fleet, kills, killedAt, appends, ledger, requested: drive.state.requested, stillActive });
    rec.expect('replacement workers that failed to start', replacementErrors.length, '==', 0);
  } finally {
    closing = true;
    await watch.close();
    await stack.close();
    await fleet.close();
  }
  return rec.finish();
}

function pickRandom<T>(items: readonly T[], random: () => number): T | null {
  return items.length === 0 ? null : (items[Math.floor(random() * items.length)] as T);
}

interface FigureInput {
  options: WorkerCrashOptions;
  stack: Awaited<ReturnType<typeof startChaosStack>>;
  fleet: ReturnType<typeof createSimFleet>;
  kills: KillRecord[];
  killedAt: Map<string, number>;
  appends: Awaited<ReturnType<ReturnType<typeof startAppender>['stop']>>;
  ledger: AppendLedger;
  requested: number;
  stillActive: number;
}

async function recordFigures(rec: ScenarioRecorder, input: FigureInput): Promise<void> {
  const { options, stack, kills } = input;
  const statuses = await jobStatusCounts(stack.db.db);
  rec.expect('compactions requested', input.requested, '==', options.compactions);
  rec.figure('jobs completed', statuses['completed'] ?? 0);
  rec.figure('jobs noop', statuses['noop'] ?? 0);
  rec.expect('jobs failed', statuses['failed'] ?? 0, '==', 0);
  rec.expect('jobs not terminal', input.stillActive, '==', 0);

  const processesKilled = kills.reduce((n, k) => n + k.workers.length, 0);
  rec.expect('SIGKILLs', processesKilled, '>=', options.kills);
  for (const mode of KILL_MODES) rec.figure(`kill moments: ${mode}`, kills.filter((k) => k.mode === mode).length);
  const fates = (await Promise.all(kills.map((k) => k.fates))).flat();
  for (const step of ['plan', 'summarize-chunk', 'finalize']) rec.figure(`steps orphaned: ${step}`, fates.filter((f) => f.step.name === step).length);
  const phases = new Map<string, number>();
  for (const [i, kill] of kills.entries()) {
    for (const fate of await kill.fates) {
      const status = fate.step.jobId ? (kills[i]?.statuses[fate.step.jobId] ?? 'gone') : 'n/a';
      phases.set(status, (phases.get(status) ?? 0) + 1);
    }
  }
  rec.figure('orphaned steps by job status at kill', [...phases].map(([s, n]) => `${s} ${n}`).join(', ') || 'none');
  // Each `llm` kill hits a worker with a call in flight, so it orphans at least one step.
  rec.expect('steps orphaned by the kills', fates.length, '>=', kills.filter((k) => k.mode === 'llm').length);
  const resumed = fates.map((f) => f.resumedAfterMs).filter((ms): ms is number => ms !== null);
  rec.expect('orphaned steps never resumed', fates.length - resumed.length, '==', 0);
  rec.expect('kill → resumption, max (ms)', resumed.length > 0 ? Math.max(...resumed) : 0, '<=', 15_000);
  rec.figure('kill → resumption, p50 (ms)', resumed.length > 0 ? percentile(resumed, 50) : 0);
  for (const mode of KILL_MODES) {
    const times = (await Promise.all(kills.filter((k) => k.mode === mode).map((k) => k.fates))).flat().flatMap((f) => (f.resumedAfterMs === null ? [] : [f.resumedAfterMs]));
    rec.figure(`kill → resumption, max after ${mode} kills (ms)`, times.length > 0 ? Math.max(...times) : 0);
  }

  rec.figure('appends acknowledged during the run', input.appends.acknowledged);
  rec.expect('append errors', input.appends.failed, '==', 0);
  const history = await checkHistories(stack.db.db, input.ledger);
  rec.figure('messages acknowledged (seeded + appended)', history.acknowledged);
  rec.expect('messages lost', history.lost, '==', 0);
  rec.expect('messages duplicated', history.duplicated + history.unexpected, '==', 0);
  rec.expect('messages altered', history.altered, '==', 0);

  const disruptions = [...input.killedAt].map(([worker, at]) => ({ worker, fromMs: at, untilMs: at }));
  const repeats = repeatedCalls(input.fleet.calls(), disruptions, PERSIST_GRACE_MS);
  rec.figure('LLM calls answered', repeats.okCalls);
  rec.expect('LLM calls repeated for finished steps', repeats.repeatedFinished, '==', 0);
  rec.figure('LLM calls repeated that were in flight at a kill', repeats.repeatedInFlight);

  const state = await checkState(stack.db.db);
  rec.expect('partial commits (rows of uncommitted jobs)', state.partialCommitRows, '==', 0);
  rec.expect('conversations with >1 clip-archive', state.multipleClipArchives, '==', 0);
  rec.expect('counter mismatches', state.counterMismatches, '==', 0);
  rec.expect('completed jobs missing batches', state.completedWithoutBatches, '==', 0);
  rec.note(
    `${options.compactions} compactions (strategy summarize, ${options.concurrent} at a time) of conversations from the shared real transcripts, ` +
      `${options.workers} worker processes, llm-sim profile ${options.profile} (one sim per worker, so each call is attributed to its process), ` +
      `appends at ${options.appendsPerSecond}/s to conversations being compacted; policy ${JSON.stringify(POLICY)}.`,
  );
  rec.note(
    'Kill moments cycle through: llm (a worker with an LLM call in flight), fleet (every worker, the moment a job is planning or committing), ' +
      'random (any worker). Killed workers are replaced at once. A step is orphaned when its BullMQ processedBy names the killed process; ' +
      'resumption is the time from the kill until another worker took the step (its processedOn).',
  );
  rec.note(
    `A repeated LLM call is a successful call whose identical request had been answered before; it is allowed only when that answer arrived ` +
      `within ${PERSIST_GRACE_MS} ms before its own worker was killed (in flight, not yet persisted).`,
  );
  rec.figure('wall time (s)', round((Date.now() - Date.parse(rec.finish().startedAt)) / 1000));
}
