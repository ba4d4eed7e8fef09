import { readFileSync } from 'node:fs';
import path from 'node:path';

import { startAppender } from '../lib/appender.js';
import { pickConversations } from '../lib/corpus.js';
import { startDrive } from '../lib/driver.js';
import { apiCalls, fetchHttp } from '../lib/http.js';
import { AppendLedger, waitForTerminalJobs } from '../lib/invariants.js';
import { recordCrashes, recordOutcome, spreadOverRequests } from '../lib/outcome.js';
import { pickRandom, round, ScenarioRecorder, type ScenarioResult, seededRandom } from '../lib/result.js';
import { seedConversations } from '../lib/seed.js';
import { createSimFleet, type Disruption, simEnv } from '../lib/sims.js';
import { type ChaosStack, startChaosStack } from '../lib/stack.js';

/**
 * Issue 10 §2: the private Redis restarted (cleanly with its AOF, and SIGKILLed) and
 * flushed, and the private Postgres restarted (fast and as a crash), while compactions run
 * and appends continue. Compaction requests and appends are retried with their
 * Idempotency-Key while a service is down, as a platform client would.
 */

export type DisruptionKind = 'redis-restart' | 'redis-kill-restart' | 'redis-flush' | 'pg-restart-fast' | 'pg-restart-immediate';

export interface ServiceRestartOptions {
  variant: 'quick' | 'full';
  compactions: number;
  concurrent: number;
  plan: DisruptionKind[];
  /** how long a stopped service stays down */
  downMs: number;
  appendsPerSecond: number;
  profile: string;
  seed: number;
  boundMs: number;
  logDir?: string;
}

export const SERVICE_RESTARTS_FULL: ServiceRestartOptions = {
  variant: 'full',
  compactions: 40,
  concurrent: 5,
  plan: [
    'redis-restart',
    'pg-restart-fast',
    'redis-kill-restart',
    'redis-flush',
    'pg-restart-immediate',
    'redis-restart',
    'pg-restart-fast',
  ],
  downMs: 2_000,
  appendsPerSecond: 5,
  profile: 'fixed:800',
  seed: 20,
  boundMs: 15 * 60_000,
};
export const SERVICE_RESTARTS_QUICK: ServiceRestartOptions = {
  variant: 'quick',
  compactions: 6,
  concurrent: 3,
  plan: ['redis-kill-restart', 'redis-flush', 'pg-restart-immediate'],
  downMs: 1_500,
  appendsPerSecond: 5,
  profile: 'fixed:600',
  seed: 20,
  boundMs: 150_000,
};

const POLICY = { auto: false, chunkTokens: 2_000, summaryMaxTokens: 400, maxLiveBatches: 3, keepRecent: 6 };
const PERSIST_GRACE_MS = 2_000;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function disrupt(stack: ChaosStack, kind: DisruptionKind, downMs: number): Promise<Disruption & { kind: DisruptionKind }> {
  const fromMs = Date.now();
  switch (kind) {
    case 'redis-flush':
      await stack.redis.flushAll();
      break;
    case 'redis-restart':
    case 'redis-kill-restart':
      await stack.redis.stop({ hard: kind === 'redis-kill-restart' });
      await pause(downMs);
      await stack.redis.start();
      break;
    case 'pg-restart-fast':
    case 'pg-restart-immediate':
      await stack.pg.stop(kind === 'pg-restart-fast' ? 'fast' : 'immediate');
      await pause(downMs);
      await stack.pg.start();
      break;
  }
  return { kind, fromMs, untilMs: Date.now() };
}

export async function runServiceRestarts(options: ServiceRestartOptions): Promise<ScenarioResult> {
  const rec = new ScenarioRecorder('service-restarts', 'Redis and Postgres restarts during compactions', options.variant);
  const random = seededRandom(options.seed);
  const stack = await startChaosStack({ redisAppendOnly: true, ...(options.logDir ? { logDir: options.logDir } : {}) });
  const fleet = createSimFleet({ profile: options.profile });
  try {
    const api = await stack.startApi();
    const http = fetchHttp(api.url, stack.keys.tenant);
    const ledger = new AppendLedger();
    const conversationIds = await seedConversations(apiCalls(http), ledger, 'restart', pickConversations(options.compactions), POLICY);
    for (const name of ['worker-1', 'worker-2']) await stack.startWorker(simEnv(await fleet.add(name)), name);

    const deadline = Date.now() + options.boundMs;
    const disruptions: Array<Disruption & { kind: DisruptionKind }> = [];
    const schedule = spreadOverRequests(options.compactions, options.plan.length, async (k) => {
      // Strike while summarizer calls are in flight (bounded wait), a little after the request.
      const until = Date.now() + 10_000;
      await pause(300 + random() * 1_500);
      while (fleet.inFlight() === 0 && Date.now() < until) await pause(20);
      disruptions.push(await disrupt(stack, options.plan[k] as DisruptionKind, options.downMs));
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
      retry: true,
      retryForMs: 60_000,
    });
    await drive.done;
    await schedule.settled();
    const stillActive = await waitForTerminalJobs(stack.db.db, Math.max(10_000, deadline - Date.now()));
    const appends = await appender.stop();

    for (const kind of ['redis-restart', 'redis-kill-restart', 'redis-flush', 'pg-restart-fast', 'pg-restart-immediate'] as const) {
      rec.figure(`disruptions: ${kind}`, disruptions.filter((d) => d.kind === kind).length);
    }
    rec.expect('disruptions done', disruptions.length, '==', options.plan.length);
    rec.figure('compaction requests retried during outages', drive.state.retries);
    rec.figure('append attempts retried during outages', appends.retries);
    rec.figure('HTTP 5xx answers to appends during outages (retried)', appends.serverErrors);
    rec.expect('of those, 500 (not 503 + retry-after)', appends.internalErrors, '==', 0);
    await recordOutcome(rec, {
      db: stack.db.db,
      ledger,
      appends,
      requested: drive.state.requested,
      expectedRequests: options.compactions,
      stillActive,
      calls: fleet.calls(),
      disruptions,
      graceMs: PERSIST_GRACE_MS,
    });
    recordRecovery(rec, options, readFileSync(path.join(stack.logDir, 'compactd.log'), 'utf8'));
    recordCrashes(rec, stack.crashes);
  } finally {
    await stack.close();
    await fleet.close();
  }
  return rec.finish();
}

function recordRecovery(rec: ScenarioRecorder, options: ServiceRestartOptions, log: string): void {
  const requeued = (log.match(/reconciler re-enqueued a job missing from Redis/g) ?? []).length;
  // A figure, not a target: after a flush, a worker that was mid-step may enqueue the job's next
  // step itself, so whether the reconciler has anything to do depends on timing. What must hold —
  // every job terminal, nothing lost or half-committed — is asserted by recordOutcome.
  rec.figure('jobs re-enqueued by the reconciler', requeued);
  rec.figure('wall time (s)', round((Date.now() - Date.parse(rec.finish().startedAt)) / 1000));
  rec.note(
    `${options.compactions} compactions (${options.concurrent} at a time) against one API process and two worker processes, llm-sim ${options.profile}; ` +
      `disruptions in order: ${options.plan.join(', ')}, each stopped service down ${options.downMs} ms, each struck while summarizer calls were in flight. ` +
      'Redis runs with AOF (fsync every second): a clean restart keeps the queues, a SIGKILL may lose the last second, a flush loses everything.',
  );
  rec.note(
    'Clients retry failed appends and compaction requests with the same Idempotency-Key (as the API documents). A repeated LLM call is allowed only ' +
      `when its earlier answer arrived within ${PERSIST_GRACE_MS} ms before a disruption (it may not have been saved).`,
  );
}
