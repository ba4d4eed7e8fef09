import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startAppender } from '../lib/appender.js';
import { pickConversations } from '../lib/corpus.js';
import { startDrive } from '../lib/driver.js';
import { apiCalls, fetchHttp } from '../lib/http.js';
import { AppendLedger, checkHistories, checkState, jobStatusCounts, waitForTerminalJobs } from '../lib/invariants.js';
import type { CompactdProcess } from '../lib/processes.js';
import { round, ScenarioRecorder, seededRandom, type ScenarioResult } from '../lib/result.js';
import { seedConversations } from '../lib/seed.js';
import { createSimFleet, repeatedCalls, simEnv, type Disruption } from '../lib/sims.js';
import { startChaosStack, type ChaosStack } from '../lib/stack.js';

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
  plan: ['redis-restart', 'pg-restart-fast', 'redis-kill-restart', 'redis-flush', 'pg-restart-immediate', 'redis-restart', 'pg-restart-fast'],
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
    const workers: CompactdProcess[] = [];
    for (const name of ['worker-1', 'worker-2']) workers.push(await stack.startWorker(simEnv(await fleet.add(name)), name));

    const deadline = Date.now() + options.boundMs;
    const disruptions: Array<Disruption & { kind: DisruptionKind }> = [];
    const after = options.plan.map((_, i) => Math.floor(((i + 0.5) * options.compactions) / options.plan.length));
    let scheduled = 0;
    let disrupting: Promise<void> = Promise.resolve();
    const drive = startDrive({
      db: stack.db.db,
      http,
      conversationIds,
      concurrent: options.concurrent,
      body: { strategy: 'summarize' },
      deadline,
      onRequested: (n) => {
        while (scheduled < options.plan.length && n > (after[scheduled] as number)) {
          const kind = options.plan[scheduled] as DisruptionKind;
          scheduled += 1;
          disrupting = disrupting.then(async () => {
            // Strike while summarizer calls are in flight (bounded wait), a little after the request.
            const until = Date.now() + 10_000;
            await pause(300 + random() * 1_500);
            while (fleet.inFlight() === 0 && Date.now() < until) await pause(20);
            disruptions.push(await disrupt(stack, kind, options.downMs));
          });
        }
      },
    });
    const appender = startAppender(http, ledger, () => {
      const running = drive.runningConversations();
      return running.length === 0 ? null : (running[Math.floor(random() * running.length)] as string);
    }, { ratePerSecond: options.appendsPerSecond, retry: true, retryForMs: 60_000 });
    await drive.done;
    await disrupting;
    const stillActive = await waitForTerminalJobs(stack.db.db, Math.max(10_000, deadline - Date.now()));
    const appends = await appender.stop();

    for (const kind of ['redis-restart', 'redis-kill-restart', 'redis-flush', 'pg-restart-fast', 'pg-restart-immediate'] as const) {
      rec.figure(`disruptions: ${kind}`, disruptions.filter((d) => d.kind === kind).length);
    }
    rec.expect('disruptions done', disruptions.length, '==', options.plan.length);
    const statuses = await jobStatusCounts(stack.db.db);
    rec.expect('compactions requested', drive.state.requested, '==', options.compactions);
    rec.figure('compaction requests retried during outages', drive.state.retries);
    rec.figure('jobs completed', statuses['completed'] ?? 0);
    rec.figure('jobs noop', statuses['noop'] ?? 0);
    rec.expect('jobs failed', statuses['failed'] ?? 0, '==', 0);
    rec.expect('jobs not terminal', stillActive, '==', 0);
    rec.figure('appends acknowledged during the run', appends.acknowledged);
    rec.figure('append attempts retried during outages', appends.retries);
    rec.figure('HTTP 5xx answers to appends during outages (retried)', appends.serverErrors);
    rec.expect('of those, 500 (not 503 + retry-after)', appends.internalErrors, '==', 0);
    rec.expect('appends never acknowledged', appends.failed, '==', 0);
    const history = await checkHistories(stack.db.db, ledger);
    rec.figure('messages acknowledged (seeded + appended)', history.acknowledged);
    rec.expect('messages lost', history.lost, '==', 0);
    rec.expect('messages duplicated', history.duplicated + history.unexpected, '==', 0);
    rec.expect('messages altered', history.altered, '==', 0);
    const state = await checkState(stack.db.db);
    rec.expect('partial commits (rows of uncommitted jobs)', state.partialCommitRows, '==', 0);
    rec.expect('conversations with >1 clip-archive', state.multipleClipArchives, '==', 0);
    rec.expect('counter mismatches', state.counterMismatches, '==', 0);
    rec.expect('completed jobs missing batches', state.completedWithoutBatches, '==', 0);
    const repeats = repeatedCalls(fleet.calls(), disruptions, PERSIST_GRACE_MS);
    rec.figure('LLM calls answered', repeats.okCalls);
    rec.expect('LLM calls repeated for finished steps', repeats.repeatedFinished, '==', 0);
    rec.figure('LLM calls repeated that were in flight at a disruption', repeats.repeatedInFlight);
    const log = readFileSync(path.join(stack.logDir, 'compactd.log'), 'utf8');
    const requeued = (log.match(/reconciler re-enqueued a job missing from Redis/g) ?? []).length;
    // A flush strikes while summarizer calls are in flight: those jobs exist only in Postgres afterwards.
    if (options.plan.includes('redis-flush')) rec.expect('jobs re-enqueued by the reconciler', requeued, '>=', 1);
    else rec.figure('jobs re-enqueued by the reconciler', requeued);
    const exited = [api.process, ...workers].filter((p) => p.child.exitCode !== null || p.child.signalCode !== null);
    rec.expect('compactd processes that died', exited.length, '==', 0);
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
  } finally {
    await stack.close();
    await fleet.close();
  }
  return rec.finish();
}
