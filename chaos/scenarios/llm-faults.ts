import { sql } from 'drizzle-orm';

import type { FaultKind } from '../../src/llm-sim/faults.js';
import { pickConversations } from '../lib/corpus.js';
import { startDrive } from '../lib/driver.js';
import { apiCalls, type Http, injectHttp } from '../lib/http.js';
import { AppendLedger, canonical, checkHistories, checkState } from '../lib/invariants.js';
import { recordCrashes } from '../lib/outcome.js';
import { round, ScenarioRecorder, type ScenarioResult } from '../lib/result.js';
import { seedConversations } from '../lib/seed.js';
import { createSimFleet, isConsolidationCall, isRepairCall, simEnv, stepKey, type WorkerCall } from '../lib/sims.js';
import { type ChaosStack, startChaosStack } from '../lib/stack.js';

/**
 * Issue 10 §3: llm-sim answers 30% of calls with a fault (429 with retry-after, 529, 500,
 * hangs, empty, truncated and malformed answers). Under `onLLMFailure: fallback` every job
 * completes, and every step whose calls all failed is summarized locally and recorded as a
 * fallback; under `fail` a job completes without fallbacks or fails with nothing changed.
 * No step makes more HTTP calls than the retry layer allows.
 */

export interface LlmFaultOptions {
  variant: 'quick' | 'full';
  /** compactions per policy (fallback, then fail) */
  compactionsPerPolicy: number;
  concurrent: number;
  maxAttempts: number;
  seed: number;
  boundMs: number;
  logDir?: string;
}

export const LLM_FAULTS_FULL: LlmFaultOptions = {
  variant: 'full',
  compactionsPerPolicy: 30,
  concurrent: 6,
  maxAttempts: 3,
  seed: 30,
  boundMs: 15 * 60_000,
};
export const LLM_FAULTS_QUICK: LlmFaultOptions = {
  variant: 'quick',
  compactionsPerPolicy: 5,
  concurrent: 5,
  maxAttempts: 3,
  seed: 30,
  boundMs: 120_000,
};

/** 30% of calls fail, spread over every fault llm-sim knows except `auth` (not retryable). */
export const FAULT_RATES: Partial<Record<FaultKind, number>> = {
  rate_limit: 0.06,
  overloaded: 0.05,
  server_error: 0.05,
  hang: 0.03,
  empty: 0.04,
  truncated: 0.04,
  malformed: 0.03,
};
const POLICY = { auto: false, chunkTokens: 2_000, summaryMaxTokens: 400, maxLiveBatches: 3, keepRecent: 6 };
const TIMEOUT_MS = 2_000;

interface Snapshot {
  active: string;
  batches: number;
  archived: number;
}

async function snapshot(db: ChaosStack['db']['db'], conversationId: string): Promise<Snapshot> {
  const [row] = await db.execute<{ active: unknown; batches: number; archived: number }>(sql`
    select (select coalesce(json_agg(json_build_object('seq', m.seq, 'kind', m.kind, 'content', m.content, 'tokens', m.tokens) order by m.seq), '[]'::json)
              from messages m where m.conversation_id = c.id) as active,
           (select count(*)::int from batches b where b.conversation_id = c.id) as batches,
           (select count(*)::int from archived_messages a where a.conversation_id = c.id) as archived
      from conversations c where c.external_id = ${conversationId}`);
  return { active: canonical(row?.active), batches: Number(row?.batches), archived: Number(row?.archived) };
}

interface PhaseOutcome {
  jobs: Array<{ conversationId: string; status: string; fallbacks: number; unchanged: boolean }>;
  calls: WorkerCall[];
}

async function runPhase(
  stack: ChaosStack,
  http: Http,
  fleet: ReturnType<typeof createSimFleet>,
  ids: string[],
  policy: 'fallback' | 'fail',
  options: LlmFaultOptions,
): Promise<PhaseOutcome> {
  const before = new Map<string, Snapshot>();
  for (const id of ids) before.set(id, await snapshot(stack.db.db, id));
  const startedAt = Date.now();
  const drive = startDrive({
    db: stack.db.db,
    http,
    conversationIds: ids,
    concurrent: options.concurrent,
    body: { strategy: 'summarize', onLLMFailure: policy },
    deadline: Date.now() + options.boundMs / 2,
  });
  await drive.done;
  const api = apiCalls(http);
  const jobs: PhaseOutcome['jobs'] = [];
  for (const [jobId, conversationId] of drive.state.jobs) {
    const job = await api.job(jobId);
    const after = await snapshot(stack.db.db, conversationId);
    jobs.push({
      conversationId,
      status: job.status,
      fallbacks: job.result?.fallbacks?.length ?? 0,
      unchanged: canonical(after) === canonical(before.get(conversationId)),
    });
  }
  return { jobs, calls: fleet.calls().filter((c) => c.startMs >= startedAt) };
}

/**
 * Per step (request without its directive): HTTP calls for the answer (the request, a hedged
 * second request raced beside a straggler, and the shorter request after an answer cut before
 * its last section) and for the optional repair call. Consolidation calls belong to
 * follow-up jobs; `withConsolidations: false` leaves them out.
 */
function callsPerStep(calls: readonly WorkerCall[], withConsolidations = true) {
  const steps = new Map<string, { first: number; retry: number; validFirst: number }>();
  for (const call of calls) {
    if (call.body === undefined || (!withConsolidations && isConsolidationCall(call.body))) continue;
    const key = stepKey(call.body);
    const entry = steps.get(key) ?? { first: 0, retry: 0, validFirst: 0 };
    if (isRepairCall(call.body)) entry.retry += 1;
    else {
      entry.first += 1;
      // an answer cut at its cap (the truncated fault) is kept, its missing sections extracted locally
      if (call.outcome === 'ok' && (call.fault === null || call.fault === 'truncated')) entry.validFirst += 1;
    }
    steps.set(key, entry);
  }
  return [...steps.values()];
}

function recordFaultFigures(rec: ScenarioRecorder, fallback: PhaseOutcome, fail: PhaseOutcome, maxAttempts: number): void {
  const calls = [...fallback.calls, ...fail.calls];
  rec.figure('HTTP calls to llm-sim', calls.length);
  const faulted = calls.filter((c) => c.fault !== null);
  rec.figure('calls answered with a fault (%)', round((100 * faulted.length) / Math.max(1, calls.length)));
  for (const kind of Object.keys(FAULT_RATES)) rec.figure(`faults: ${kind}`, faulted.filter((c) => c.fault === kind).length);

  const terminal = ['completed', 'noop', 'failed', 'cancelled'];
  rec.expect('jobs not terminal', [...fallback.jobs, ...fail.jobs].filter((j) => !terminal.includes(j.status)).length, '==', 0);
  rec.figure('fallback policy: jobs completed', fallback.jobs.filter((j) => j.status === 'completed').length);
  rec.expect(
    'fallback policy: jobs neither completed nor noop',
    fallback.jobs.filter((j) => j.status !== 'completed' && j.status !== 'noop').length,
    '==',
    0,
  );
  const recorded = fallback.jobs.reduce((n, j) => n + j.fallbacks, 0);
  // the recorded fallbacks are the compactions'; their consolidations are jobs of their own
  const stepsWithoutAnswer = callsPerStep(fallback.calls, false).filter((s) => s.validFirst === 0).length;
  rec.figure('fallback policy: steps summarized locally (recorded fallbacks)', recorded);
  rec.expect('fallback policy: steps with no valid answer minus recorded fallbacks', stepsWithoutAnswer - recorded, '==', 0);
  rec.figure('fail policy: jobs completed', fail.jobs.filter((j) => j.status === 'completed').length);
  rec.figure('fail policy: jobs failed', fail.jobs.filter((j) => j.status === 'failed').length);
  rec.expect(
    'fail policy: failed jobs that changed the conversation',
    fail.jobs.filter((j) => j.status === 'failed' && !j.unchanged).length,
    '==',
    0,
  );
  rec.expect('fail policy: jobs with fallbacks', fail.jobs.filter((j) => j.fallbacks > 0).length, '==', 0);

  const steps = callsPerStep(calls);
  rec.figure('steps (chunks and re-summaries) that called the LLM', steps.length);
  rec.figure('HTTP calls per step, max (first answer)', Math.max(0, ...steps.map((s) => s.first)));
  rec.figure('HTTP calls per step, max (repair call)', Math.max(0, ...steps.map((s) => s.retry)));
  // the request, a hedge beside a straggler, the shorter request after a cut answer: each gets the retry layer's attempts
  rec.expect('steps over the retry bound', steps.filter((s) => s.first > 3 * maxAttempts || s.retry > maxAttempts).length, '==', 0);
}

export async function runLlmFaults(options: LlmFaultOptions): Promise<ScenarioResult> {
  const rec = new ScenarioRecorder('llm-faults', 'LLM fault storm (30% of calls fail)', options.variant);
  const stack = await startChaosStack(options.logDir ? { logDir: options.logDir } : {});
  const fleet = createSimFleet({ profile: 'fixed:300', faults: { rates: FAULT_RATES, retryAfterMs: 300 }, seed: options.seed });
  try {
    const inline = await stack.inlineApp();
    const http = injectHttp(inline.app, stack.keys.tenant);
    const ledger = new AppendLedger();
    const conversations = pickConversations(options.compactionsPerPolicy * 2);
    const fallbackIds = await seedConversations(
      apiCalls(http),
      ledger,
      'faults-fallback',
      conversations.slice(0, options.compactionsPerPolicy),
      POLICY,
    );
    const failIds = await seedConversations(
      apiCalls(http),
      ledger,
      'faults-fail',
      conversations.slice(options.compactionsPerPolicy),
      POLICY,
    );
    const env = { COMPACTD_LLM_MAX_ATTEMPTS: String(options.maxAttempts), COMPACTD_LLM_TIMEOUT_MS: String(TIMEOUT_MS) };
    for (const name of ['worker-1', 'worker-2']) await stack.startWorker({ ...simEnv(await fleet.add(name)), ...env }, name);

    const fallback = await runPhase(stack, http, fleet, fallbackIds, 'fallback', options);
    const fail = await runPhase(stack, http, fleet, failIds, 'fail', options);

    recordFaultFigures(rec, fallback, fail, options.maxAttempts);
    recordCrashes(rec, stack.crashes);
    const history = await checkHistories(stack.db.db, ledger);
    rec.expect('messages lost', history.lost, '==', 0);
    rec.expect('messages duplicated', history.duplicated + history.unexpected, '==', 0);
    const state = await checkState(stack.db.db);
    rec.expect('partial commits (rows of uncommitted jobs)', state.partialCommitRows, '==', 0);
    rec.expect('counter mismatches', state.counterMismatches, '==', 0);
    rec.note(
      `${options.compactionsPerPolicy} compactions under onLLMFailure: fallback, then ${options.compactionsPerPolicy} under fail (strategy summarize, ${options.concurrent} at a time), ` +
        `two worker processes, COMPACTD_LLM_MAX_ATTEMPTS=${options.maxAttempts}, COMPACTD_LLM_TIMEOUT_MS=${TIMEOUT_MS} (hangs end there), llm-sim fixed:300 with fault rates ` +
        `${JSON.stringify(FAULT_RATES)} and retry-after 300 ms.`,
    );
    rec.note(
      'A step is one summarizer request without its final directive; its first answer may take up to COMPACTD_LLM_MAX_ATTEMPTS HTTP calls, and its one ' +
        'identifier retry (a different request naming the missing identifiers) up to as many again. A valid answer is an ok call with no fault.',
    );
  } finally {
    await stack.close();
    await fleet.close();
  }
  return rec.finish();
}
