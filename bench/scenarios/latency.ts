import { isMergeRequest } from '../../src/compaction/summarize/prompt.js';
import type { HistoryMessage, NormalizedMessage } from '../../src/compaction/types.js';
import type { CallRecord } from '../../src/llm-sim/state.js';
import { assertCompleted, type BenchContext, compactMeasured, seedConversation } from '../lib/context.js';
import { loadSession, LONG_SESSIONS } from '../lib/conversations.js';
import { emptyScenario, figure, type ScenarioResult, target } from '../lib/result.js';
import { rangeText, round, spread } from '../lib/stats.js';
import { planSpan, runPeers, type SessionPlan, windowCase } from './peers.js';
import { PEERS_TITLE, peersResult } from './peers-report.js';

/**
 * Scenarios 1 and 2: compaction wall time against the LLM critical path on the long real
 * sessions, and against the peers (the real LangChain summarization middleware on the same
 * span, the sequential-fold baseline on the same chunks) on the same sim in the same run.
 * Scenario 1 runs three times: on the plain profile, with llm-sim's length overrun (a share of
 * answers runs past the requested length, as real models' do), and on the list-everything
 * profile (every answer lists each path, error and sentence it sees and runs into its cap).
 */

export interface LatencyOptions {
  profile: string;
  sessions: readonly string[];
  runs: number;
  peerRuns: number;
  /** llm-sim's length overrun for the second series */
  overrun: { rate: number; factor: number };
  overrunRuns: number;
  /** runs per session on llm-sim's list-everything profile (answers that fill their cap) */
  listRuns: number;
}

/** llm-sim's profile whose answers list everything they see and stop at max_tokens. */
const LIST_EVERYTHING = 'list-everything';

/** A third of the answers run half again past their requested length. */
const OVERRUN = { rate: 0.3, factor: 1.5 };

export function latencyOptions(quick: boolean): LatencyOptions {
  return quick
    ? { profile: 'fixed:500', sessions: [LONG_SESSIONS[2]], runs: 1, peerRuns: 1, overrun: OVERRUN, overrunRuns: 1, listRuns: 1 }
    : { profile: 'haiku', sessions: LONG_SESSIONS, runs: 3, peerRuns: 2, overrun: OVERRUN, overrunRuns: 2, listRuns: 2 };
}

interface SessionRuns {
  session: string;
  messages: number;
  sourceTokens: number;
  chunks: number;
  wallMs: number[];
  criticalMs: number[];
  ratio: number[];
  calls: number[];
  retries: number[];
  strictMs: number[];
  nonLlmMs: number[];
  /** the same compaction with the identifier check off (policy identifierCheck: false) */
  noCheckMs: number[];
  /** chunks the local summarizer stood in for because an answer stopped at its budget (target: none) */
  truncationFallbacks: number;
  /** chunks the local summarizer stood in for, whatever the reason (target: none) */
  fallbacks: number;
  /** chunk answers stopped at their cap (max_tokens), over every run */
  cutAnswers: number;
  plan: SessionPlan;
}

export async function runLatency(ctx: BenchContext): Promise<ScenarioResult[]> {
  const options = latencyOptions(ctx.quick);
  const started = performance.now();
  ctx.svc.sim.configure({ profile: options.profile, summarizeWindow: null });
  await ctx.svc.startWorker();
  const sessions: SessionRuns[] = [];
  for (const session of options.sessions) {
    ctx.log(`latency: session ${session.slice(0, 8)} × ${options.runs} (${options.profile})`);
    sessions.push(await runSession(ctx, session, loadSession(session), options));
  }
  const latency = latencyResult(ctx, sessions, options);

  // the same sessions with llm-sim's length overrun: the runaway cap and the hedge, measured
  ctx.svc.sim.configure({ overrun: options.overrun });
  const overrun: SessionRuns[] = [];
  try {
    for (const session of options.sessions) {
      ctx.log(
        `latency (length overrun ${options.overrun.rate} × ${options.overrun.factor}): session ${session.slice(0, 8)} × ${options.overrunRuns}`,
      );
      overrun.push(await runSession(ctx, session, loadSession(session), { ...options, runs: options.overrunRuns }, false));
    }
  } finally {
    ctx.svc.sim.configure({ overrun: { rate: 0 } });
  }
  const overrunLabel = `length overrun ${Math.round(options.overrun.rate * 100)} % of answers × ${options.overrun.factor}`;
  stressSeries(latency, overrun, {
    label: overrunLabel,
    setupKey: 'overrunProfile',
    setup: `${options.profile} with ${overrunLabel} (llm-sim --overrun ${options.overrun.rate} --overrun-factor ${options.overrun.factor}), ${options.overrunRuns} runs per session`,
  });

  // the same sessions under answers that list everything they see: each one cut at its cap, kept, no call in series
  ctx.svc.sim.configure({ profile: LIST_EVERYTHING });
  const listing: SessionRuns[] = [];
  try {
    for (const session of options.sessions) {
      ctx.log(`latency (${LIST_EVERYTHING}): session ${session.slice(0, 8)} × ${options.listRuns}`);
      listing.push(await runSession(ctx, session, loadSession(session), { ...options, runs: options.listRuns }, false));
    }
  } finally {
    ctx.svc.sim.configure({ profile: options.profile });
  }
  stressSeries(latency, listing, {
    label: `the ${LIST_EVERYTHING} profile`,
    setupKey: 'listEverythingProfile',
    setup: `llm-sim --profile ${LIST_EVERYTHING}: Haiku's pace, every answer lists each identifier and sentence it sees until max_tokens stops it, ${options.listRuns} runs per session`,
  });
  latency.durationMs = performance.now() - started;
  if (ctx.only && !ctx.only.includes('peers')) {
    const skipped = emptyScenario('peers', PEERS_TITLE);
    skipped.status = 'not measured';
    skipped.reason = `not selected in this run (--only ${ctx.only.join(',')})`;
    return [latency, skipped];
  }

  const peersStarted = performance.now();
  const peers = await runPeers(
    ctx,
    sessions.map((s) => s.plan),
    options.peerRuns,
  );
  const window = await windowCase(ctx, options, ctx.quick ? [loadSession(options.sessions[0] as string)] : LONG_SESSIONS.map(loadSession));
  const peerResult = peersResult(ctx, sessions, peers, options);
  peerResult.tables.push(window.table);
  peerResult.targets.push(...window.targets);
  peerResult.notes.push(...window.notes);
  peerResult.durationMs = performance.now() - peersStarted;
  return [latency, peerResult];
}

async function runSession(
  ctx: BenchContext,
  session: string,
  messages: NormalizedMessage[],
  options: LatencyOptions,
  withNoCheck = true,
): Promise<SessionRuns> {
  const runs: SessionRuns = {
    session,
    messages: messages.length,
    sourceTokens: 0,
    chunks: 0,
    wallMs: [],
    criticalMs: [],
    ratio: [],
    calls: [],
    retries: [],
    strictMs: [],
    nonLlmMs: [],
    noCheckMs: [],
    truncationFallbacks: 0,
    fallbacks: 0,
    cutAnswers: 0,
    plan: null as unknown as SessionPlan,
  };
  for (let run = 0; run < options.runs; run += 1) {
    const id = ctx.uniqueId(`lat-${session.slice(0, 8)}`);
    await seedConversation(ctx, id, messages);
    const job = await compactMeasured(ctx, id);
    assertCompleted(job, `latency ${session}`);
    const llm = job.timing.llm;
    if (!llm || !job.row.plan) throw new Error(`latency ${session}: no LLM calls recorded`);
    runs.wallMs.push(job.timing.wallMs);
    runs.criticalMs.push(llm.criticalPathMs);
    runs.ratio.push(job.timing.wallMs / llm.criticalPathMs);
    runs.calls.push(llm.calls);
    runs.retries.push(llm.retries);
    runs.strictMs.push(llm.strictCriticalMs);
    runs.nonLlmMs.push(job.timing.nonLlmMs);
    runs.truncationFallbacks += truncationFallbacks(job.view.result);
    runs.fallbacks += fallbackCount(job.view.result);
    runs.cutAnswers += cutChunkAnswers(job.allCalls);
    runs.chunks = job.row.plan.chunks.length;
    runs.sourceTokens = job.row.plan.chunks.reduce((sum, c) => sum + c.messageTokens, 0);
    if (run === 0 && withNoCheck) runs.plan = await sessionPlan(ctx, id, session, job.row.plan);
  }
  if (!withNoCheck) return runs;
  // One more run without the identifier check shows what that guard costs in latency.
  const id = ctx.uniqueId(`latnc-${session.slice(0, 8)}`);
  await seedConversation(ctx, id, messages, { identifierCheck: false });
  const job = await compactMeasured(ctx, id);
  assertCompleted(job, `latency ${session} (identifier check off)`);
  runs.noCheckMs.push(job.timing.wallMs);
  return runs;
}

/** The chunks compactd planned, as messages (from the export), for the peers to run on. */
async function sessionPlan(
  ctx: BenchContext,
  id: string,
  session: string,
  plan: NonNullable<Awaited<ReturnType<typeof compactMeasured>>['row']['plan']>,
): Promise<SessionPlan> {
  const exported = await ctx.svc.api.exportHistory(id);
  const span = planSpan(exported, plan.compressedSeqs);
  const bySeq = new Map<number, HistoryMessage>(span.history.map((m) => [m.seq, m]));
  const pick = (seqs: readonly number[]) => seqs.map((seq) => bySeq.get(seq)).filter((m): m is HistoryMessage => m !== undefined);
  return {
    session,
    chunks: plan.chunks.map((c) => pick(c.seqs)),
    ...span,
    sourceTokens: plan.chunks.reduce((sum, c) => sum + c.messageTokens, 0),
  };
}

function latencyResult(ctx: BenchContext, sessions: SessionRuns[], options: LatencyOptions): ScenarioResult {
  const result = emptyScenario('latency', '1. Latency vs the LLM critical path');
  result.setup = {
    profile: options.profile,
    transcripts: sessions.map((s) => `spotter-claude-code/${s.session}.jsonl`).join(', '),
    runsPerSession: options.runs,
    strategy: 'summarize (default policy: chunkTokens 12000, summaryMaxTokens 2000, maxLiveBatches 6)',
    wall: 'job created_at (API) → finished_at (commit)',
    criticalPath:
      'longest chunk call chain (a call with any second request of its step: a hedge beside a straggler, a repair under identifierRepair: call), from llm-sim call log; consolidations run as follow-up jobs, off the path',
  };
  const allRatios = sessions.flatMap((s) => s.ratio);
  result.figures.push(figure('wall / critical path (all sessions, all runs)', '×', allRatios));
  result.figures.push(
    figure(
      'compactd wall time (all sessions)',
      's',
      sessions.flatMap((s) => s.wallMs.map((ms) => ms / 1000)),
    ),
  );
  result.tables.push({
    title: 'Per session (median over runs; range in brackets)',
    columns: [
      'session',
      'messages',
      'tokens compacted',
      'chunks',
      'LLM calls (retries)',
      'wall s',
      'non-LLM s',
      'critical path s',
      'wall / critical',
      'longest single chunk call s',
      'wall / that',
    ],
    rows: sessions.map((s) => [
      s.session.slice(0, 8),
      s.messages,
      s.sourceTokens,
      s.chunks,
      `${spread(s.calls).median} (${spread(s.retries).median})`,
      rangeText(s.wallMs.map((v) => v / 1000)),
      rangeText(s.nonLlmMs.map((v) => v / 1000)),
      rangeText(s.criticalMs.map((v) => v / 1000)),
      rangeText(s.ratio),
      rangeText(s.strictMs.map((v) => v / 1000)),
      rangeText(s.wallMs.map((w, i) => w / (s.strictMs[i] ?? Number.NaN))),
    ]),
  });
  for (const s of sessions)
    ctx.chart.push({
      strategy: 'compactd',
      tokens: s.sourceTokens,
      seconds: spread(s.wallMs).median / 1000,
      ok: true,
      label: s.session.slice(0, 8),
    });
  result.targets.push(target('median wall / critical path (dependent call chain)', '<=', 1.15, spread(allRatios).median, '×'));
  const strictRatios = sessions.flatMap((s) => s.wallMs.map((w, i) => w / (s.strictMs[i] ?? Number.NaN)));
  result.figures.push(figure('wall / longest single chunk call', '×', strictRatios));
  result.targets.push(target("median wall / the job's longest single chunk call", '<=', 1.15, spread(strictRatios).median, '×'));
  const truncated = sessions.reduce((sum, s) => sum + s.truncationFallbacks, 0);
  result.figures.push(figure('truncation fallbacks (answers stopped at their budget, then summarized locally)', 'chunks', [truncated]));
  result.targets.push(target('truncation fallbacks over every run', '<=', 0, truncated, 'chunks'));
  const med = (values: number[]) => spread(values).median;
  const nonLlm = med(sessions.flatMap((s) => s.nonLlmMs)) / 1000;
  const wall = med(sessions.flatMap((s) => s.wallMs)) / 1000;
  const chain = med(sessions.flatMap((s) => s.criticalMs)) / 1000;
  const strict = med(sessions.flatMap((s) => s.strictMs)) / 1000;
  const retries = med(sessions.flatMap((s) => s.retries));
  const [chainTarget, strictTarget] = result.targets;
  if (chainTarget && !chainTarget.met) {
    chainTarget.bottleneck = `time outside LLM calls: ${round(nonLlm, 2)} s of a ${round(wall, 2)} s job (median) is not spent waiting on any call — plan, queue hops, prompt building and the commit; scenario 3 profiles where it goes.`;
  }
  if (strictTarget && !strictTarget.met) {
    strictTarget.bottleneck =
      `the job waits ${round(wall - strict, 2)} s beyond its longest call (median): ${round(nonLlm, 2)} s outside any LLM call, ` +
      `${retries} second request(s) per job (hedges or repairs), a dependent chain of ${round(chain, 1)} s against ${round(strict, 1)} s for the longest single call; ` +
      'calls that start late (queue hops, the provider limiter) lengthen the round too.';
  }
  if (ctx.quick)
    result.notes.push('Quick mode: one session, one run, `fixed:500` profile (every call 0.5 s) instead of the Haiku-like profile.');
  return result;
}

/**
 * The second and third series: the same sessions while llm-sim runs a share of answers past
 * their requested length (the cap's headroom keeps them whole), then while every answer lists
 * everything it sees and runs into its cap (the cut answer is kept, the sections it never
 * reached extracted locally). Either way the job takes its longest call, with no second call
 * in series and no local fallback.
 */
function stressSeries(result: ScenarioResult, sessions: SessionRuns[], series: { label: string; setupKey: string; setup: string }): void {
  const { label } = series;
  result.setup[series.setupKey] = series.setup;
  result.tables.push({
    title: `Under ${label} (median over runs; range in brackets)`,
    columns: [
      'session',
      'chunks',
      'LLM calls (retries)',
      'answers cut at their cap (all runs)',
      'wall s',
      'longest single chunk call s',
      'wall / that',
      'local fallbacks',
    ],
    rows: sessions.map((s) => [
      s.session.slice(0, 8),
      s.chunks,
      `${spread(s.calls).median} (${spread(s.retries).median})`,
      s.cutAnswers,
      rangeText(s.wallMs.map((v) => v / 1000)),
      rangeText(s.strictMs.map((v) => v / 1000)),
      rangeText(s.wallMs.map((w, i) => w / (s.strictMs[i] ?? Number.NaN))),
      s.fallbacks,
    ]),
  });
  const ratios = sessions.flatMap((s) => s.wallMs.map((w, i) => w / (s.strictMs[i] ?? Number.NaN)));
  result.figures.push(figure(`wall / longest single chunk call, ${label}`, '×', ratios));
  const ratio = target(`median wall / the job's longest single chunk call, ${label}`, '<=', 1.15, spread(ratios).median, '×');
  const med = (values: number[]) => spread(values).median;
  if (!ratio.met) {
    ratio.bottleneck =
      `the job waits ${round((med(sessions.flatMap((s) => s.wallMs)) - med(sessions.flatMap((s) => s.strictMs))) / 1000, 2)} s beyond its longest call (median): ` +
      `${round(med(sessions.flatMap((s) => s.nonLlmMs)) / 1000, 2)} s outside any LLM call and ${med(sessions.flatMap((s) => s.retries))} second request(s) per job (hedges beside a straggler).`;
  }
  result.targets.push(ratio);
  const fallbacks = sessions.reduce((sum, s) => sum + s.fallbacks, 0);
  result.figures.push(figure(`local fallbacks, ${label}`, 'chunks', [fallbacks]));
  const noFallback = target(`local fallbacks over every run, ${label}`, '<=', 0, fallbacks, 'chunks');
  if (!noFallback.met)
    noFallback.bottleneck =
      "answers the provider failed for good (see the jobs' result.fallbacks reasons): the local summarizer stood in for them.";
  result.targets.push(noFallback);
}

/** Chunk answers (not the consolidation's merge) that llm-sim stopped at max_tokens. */
function cutChunkAnswers(calls: readonly CallRecord[]): number {
  return calls.filter((call) => call.stop === 'length' && !isMergeRequest(JSON.stringify(call.body ?? ''))).length;
}

/** Chunks of a job result the local summarizer stood in for. */
function fallbackCount(result: Record<string, unknown> | null): number {
  return ((result?.['fallbacks'] ?? []) as unknown[]).length;
}

/** Chunks of a job result whose fallback was an answer truncated at its budget. */
function truncationFallbacks(result: Record<string, unknown> | null): number {
  const fallbacks = (result?.['fallbacks'] ?? []) as Array<{ reason?: string | null }>;
  return fallbacks.filter((f) => f.reason === 'LLM_OUTPUT_TRUNCATED').length;
}
