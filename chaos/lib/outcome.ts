import type { Db } from '../../src/db/client.js';
import type { AppenderStats } from './appender.js';
import { type AppendLedger, checkHistories, checkState, jobStatusCounts } from './invariants.js';
import type { ScenarioRecorder } from './result.js';
import { type Disruption, repeatedCalls, type WorkerCall } from './sims.js';

/**
 * The figures every disruptive suite ends with, read from Postgres and the llm-sim call
 * logs: jobs by status, appends, every acknowledged message exactly once and unaltered, no
 * partial commit, consistent counters, and no LLM call repeated for a finished step.
 */

export interface OutcomeInput {
  db: Db;
  ledger: AppendLedger;
  appends: AppenderStats;
  requested: number;
  expectedRequests: number;
  stillActive: number;
  calls: WorkerCall[];
  disruptions: Disruption[];
  /** time for a worker to persist an answer it received (an answer younger than this at a disruption was in flight) */
  graceMs: number;
}

export async function recordOutcome(rec: ScenarioRecorder, input: OutcomeInput): Promise<void> {
  const statuses = await jobStatusCounts(input.db);
  rec.expect('compactions requested', input.requested, '==', input.expectedRequests);
  rec.figure('jobs completed', statuses['completed'] ?? 0);
  rec.figure('jobs noop', statuses['noop'] ?? 0);
  rec.expect('jobs failed', statuses['failed'] ?? 0, '==', 0);
  rec.expect('jobs not terminal', input.stillActive, '==', 0);

  rec.figure('appends acknowledged during the run', input.appends.acknowledged);
  rec.expect('appends never acknowledged', input.appends.failed, '==', 0);
  const history = await checkHistories(input.db, input.ledger);
  rec.figure('messages acknowledged (seeded + appended)', history.acknowledged);
  rec.expect('messages lost', history.lost, '==', 0);
  rec.expect('messages duplicated', history.duplicated + history.unexpected, '==', 0);
  rec.expect('messages altered', history.altered, '==', 0);

  const repeats = repeatedCalls(input.calls, input.disruptions, input.graceMs);
  rec.figure('LLM calls answered', repeats.okCalls);
  rec.expect('LLM calls repeated for finished steps', repeats.repeatedFinished, '==', 0);
  rec.figure('LLM calls repeated that were in flight at a disruption', repeats.repeatedInFlight);
  for (const example of repeats.examples)
    rec.note(`REPEATED CALL: ${example}; disruptions: ${input.disruptions.map((d) => `${d.worker ?? 'all'}@${d.fromMs}`).join(', ')}`);

  const state = await checkState(input.db);
  rec.expect('partial commits (rows of uncommitted jobs)', state.partialCommitRows, '==', 0);
  rec.expect('conversations with >1 clip-archive', state.multipleClipArchives, '==', 0);
  rec.expect('counter mismatches', state.counterMismatches, '==', 0);
  rec.expect('completed jobs missing batches', state.completedWithoutBatches, '==', 0);
}

/**
 * Spreads `events` over a run of `compactions` requests: event k starts after request
 * ⌊(k + ½)·N/K⌋ was accepted, events run one after another.
 */
export function spreadOverRequests(compactions: number, events: number, run: (k: number) => Promise<void>) {
  const after = Array.from({ length: events }, (_, k) => Math.floor(((k + 0.5) * compactions) / events));
  let scheduled = 0;
  let chain: Promise<void> = Promise.resolve();
  return {
    onRequested(n: number): void {
      while (scheduled < events && n > (after[scheduled] as number)) {
        const k = scheduled++;
        chain = chain.then(() => run(k));
      }
    },
    settled: () => chain,
  };
}

/**
 * compactd processes that exited on their own (the stack restarted them), with what they last
 * wrote. No crash is allowed, whatever its cause: the postgres.js defect that once crashed
 * processes during Postgres restarts is patched at install (patches/postgres+3.4.9.patch).
 */
export function recordCrashes(rec: ScenarioRecorder, crashes: ReadonlyArray<{ name: string; exit: number | string; tail: string }>): void {
  rec.expect('compactd processes that crashed', crashes.length, '==', 0);
  for (const crash of crashes.slice(0, 3))
    rec.note(`CRASH of ${crash.name} (exit ${crash.exit}), restarted: ${crash.tail.replace(/\s*\n\s*/g, ' | ').slice(0, 600)}`);
}
