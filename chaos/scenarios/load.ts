import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

import { liveTurn, pickConversations } from '../lib/corpus.js';
import { type CpuSample, cpuShares, sampleCpu } from '../lib/cpu.js';
import { apiCalls, type Http, nodeHttp } from '../lib/http.js';
import { AppendLedger, checkHistories, checkState, jobStatusCounts, waitForTerminalJobs } from '../lib/invariants.js';
import { recordCrashes } from '../lib/outcome.js';
import { percentile, round, ScenarioRecorder, type ScenarioResult, seededRandom } from '../lib/result.js';
import { seedConversations } from '../lib/seed.js';
import { startChaosStack } from '../lib/stack.js';

/**
 * Issue 10 §8: concurrent clients, each an agent appending to its own conversation and
 * reading its ready-to-send context, against one API process over HTTP, while a worker
 * process compacts (automatically at the threshold, and on requests sent alongside).
 * Clients pause between rounds as an agent does while its model answers; a second,
 * shorter phase without pauses measures where the single API process saturates.
 */

export interface LoadOptions {
  variant: 'quick' | 'full';
  clients: number;
  durationMs: number;
  /** measured after this warm-up (JIT, pools), which is reported apart */
  warmupMs: number;
  /** pause between an agent's rounds (its model call), uniform in this range */
  thinkMs: [number, number];
  saturationMs: number;
  /** manual compaction requests per second, besides the automatic ones */
  compactionsPerSecond: number;
  /** p99 the paced phase is held to: the 50 ms for the full run; the quick run in CI is a smoke bound */
  p99TargetMs: number;
  /** run the worker process (compactions); false measures the API alone */
  worker?: boolean;
  /** who summarizes: llm-sim in a process of its own (LLM-bound, as in production) or the local summarizer (CPU in the worker) */
  summarizer?: 'llm-sim' | 'local';
  seed: number;
  logDir?: string;
}

export const LOAD_FULL: LoadOptions = {
  variant: 'full',
  clients: 100,
  durationMs: 60_000,
  warmupMs: 5_000,
  p99TargetMs: 50,
  thinkMs: [500, 1_500],
  saturationMs: 15_000,
  compactionsPerSecond: 1,
  seed: 80,
};
export const LOAD_QUICK: LoadOptions = {
  variant: 'quick',
  clients: 100,
  durationMs: 10_000,
  warmupMs: 2_000,
  p99TargetMs: 1_000,
  thinkMs: [500, 1_500],
  saturationMs: 4_000,
  compactionsPerSecond: 1,
  seed: 80,
};

// Automatic compaction stays on; the window is large enough that the manual requests drive the rate.
const POLICY = { auto: true, keepRecent: 6 };
const CONTEXT_LIMIT = Number(process.env['CHAOS_LOAD_CONTEXT_LIMIT'] ?? 32_000);

interface Sample {
  kind: 'append' | 'context';
  /** epoch ms when the request was sent */
  at: number;
  ms: number;
  ok: boolean;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function agent(
  http: Http,
  id: string,
  ledger: AppendLedger,
  until: number,
  think: () => number,
  samples: Sample[],
  errors: string[],
  counter: { n: number },
): Promise<void> {
  // Agents do not start in lockstep: each begins somewhere in its first pause.
  await pause(think());
  while (Date.now() < until) {
    const message = liveTurn(counter.n++);
    let started = performance.now();
    try {
      const res = await http.request('POST', `/v1/conversations/${id}/messages`, { body: { messages: [message] } });
      samples.push({
        kind: 'append',
        at: Date.now() - (performance.now() - started),
        ms: performance.now() - started,
        ok: res.status === 201,
      });
      if (res.status === 201)
        ledger.record(
          id,
          res.json<{ messages: Array<{ seq: number }> }>().messages.map((m) => m.seq),
          [message],
        );
      else errors.push(`append ${res.status} ${res.text.slice(0, 200)}`);
    } catch (error) {
      samples.push({ kind: 'append', at: Date.now() - (performance.now() - started), ms: performance.now() - started, ok: false });
      errors.push(`append: ${(error as Error).message}`);
    }
    started = performance.now();
    try {
      const res = await http.request('GET', `/v1/conversations/${id}/context?format=anthropic`);
      samples.push({
        kind: 'context',
        at: Date.now() - (performance.now() - started),
        ms: performance.now() - started,
        ok: res.status === 200,
      });
      if (res.status !== 200) errors.push(`context ${res.status} ${res.text.slice(0, 200)}`);
    } catch (error) {
      samples.push({ kind: 'context', at: Date.now() - (performance.now() - started), ms: performance.now() - started, ok: false });
      errors.push(`context: ${(error as Error).message}`);
    }
    const wait = think();
    if (wait > 0) await pause(Math.min(wait, Math.max(0, until - Date.now())));
  }
}

async function phase(
  http: Http,
  ids: string[],
  ledger: AppendLedger,
  timing: {
    warmupMs: number;
    durationMs: number;
    think: () => number;
    compactionsPerSecond: number;
    random: () => number;
    cpu: () => CpuSample | null;
  },
) {
  const { warmupMs, durationMs, think, compactionsPerSecond, random } = timing;
  const samples: Sample[] = [];
  const errors: string[] = [];
  const counter = { n: 0 };
  const measuredFrom = Date.now() + warmupMs;
  const until = measuredFrom + durationMs;
  const compactions = { requested: 0, failed: 0 };
  const compactor = (async () => {
    while (Date.now() < until && compactionsPerSecond > 0) {
      const id = ids[Math.floor(random() * ids.length)] as string;
      const res = await http
        .request('POST', `/v1/conversations/${id}/compactions`, { body: { strategy: 'summarize', keepRecent: 6 } })
        .catch(() => null);
      if (res && (res.status === 200 || res.status === 202)) compactions.requested += 1;
      else compactions.failed += 1;
      await pause(1_000 / compactionsPerSecond);
    }
  })();
  let cpuFrom: CpuSample | null = null;
  // The clients share this process's event loop: a request answered while it is busy is
  // timed late. Its delay over the measured window says how much of a tail is the client's.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  const cpuStart = pause(warmupMs).then(() => {
    cpuFrom = timing.cpu();
    loopDelay.enable();
  });
  await Promise.all(ids.map((id) => agent(http, id, ledger, until, think, samples, errors, counter)));
  loopDelay.disable();
  await compactor;
  await cpuStart;
  const cpu = cpuShares(cpuFrom, timing.cpu());
  return {
    samples: samples.filter((x) => x.at >= measuredFrom),
    warmup: samples.filter((x) => x.at < measuredFrom),
    errors,
    compactions,
    cpu,
    clientLoopDelayMs: { p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
    measured: { from: measuredFrom, until },
    seconds: durationMs / 1000,
  };
}

/**
 * The API's own time for each request it began inside [from, until): the `responseTime` of its
 * request log lines, from the request's arrival to its answer. Beside the client's figures, it
 * tells how much of a tail is the service and how much the way there and back.
 */
function apiTimes(logFile: string, from: number, until: number): number[] {
  const times: number[] = [];
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.startsWith('[api] ') || !line.includes('"request completed"')) continue;
    const entry = JSON.parse(line.slice('[api] '.length)) as { time: number; responseTime: number };
    const began = entry.time - entry.responseTime;
    if (began >= from && began < until) times.push(entry.responseTime);
  }
  return times;
}

function recordPhase(
  rec: ScenarioRecorder,
  label: string,
  result: Awaited<ReturnType<typeof phase>>,
  p99TargetMs: number | null,
  logFile: string,
): void {
  const all = result.samples.map((s) => s.ms);
  rec.figure(`${label}: requests`, result.samples.length);
  rec.figure(`${label}: requests per second`, round(result.samples.length / result.seconds));
  for (const kind of ['append', 'context'] as const) {
    const times = result.samples.filter((s) => s.kind === kind).map((s) => s.ms);
    rec.figure(`${label}: ${kind} p50 / p99 (ms)`, `${round(percentile(times, 50))} / ${round(percentile(times, 99))}`);
  }
  const windows = new Map<number, number[]>();
  for (const x of result.samples) windows.set(Math.floor(x.at / 10_000), [...(windows.get(Math.floor(x.at / 10_000)) ?? []), x.ms]);
  rec.figure(
    `${label}: p99 per 10-s window (ms)`,
    [...windows]
      .sort(([a], [b]) => a - b)
      .map(([, ms]) => round(percentile(ms, 99)))
      .join(', '),
  );
  if (result.cpu) {
    rec.figure(
      `${label}: machine CPU busy / this suite / other processes / steal (%)`,
      `${result.cpu.busy} / ${result.cpu.ours} / ${result.cpu.others} / ${result.cpu.steal}`,
    );
    // The same requests cost this suite's processes different CPU on different hours of this
    // shared host; the tail follows that cost, so it is reported beside it.
    rec.figure(
      `${label}: CPU per request, this suite's processes (ms)`,
      round(((result.cpu.ours / 100) * cpus().length * result.seconds * 1000) / Math.max(1, result.samples.length), 2),
    );
  }
  const inApi = apiTimes(logFile, result.measured.from, result.measured.until);
  rec.figure(
    `${label}: inside the API (its own time per request), p50 / p99 (ms)`,
    `${round(percentile(inApi, 50))} / ${round(percentile(inApi, 99))}`,
  );
  rec.figure(
    `${label}: the load generator's own event-loop delay, p99 / max (ms)`,
    `${round(result.clientLoopDelayMs.p99)} / ${round(result.clientLoopDelayMs.max)}`,
  );
  if (result.warmup.length > 0)
    rec.figure(
      `${label}: warm-up requests (not measured), p99 (ms)`,
      `${result.warmup.length}, ${round(
        percentile(
          result.warmup.map((x) => x.ms),
          99,
        ),
      )}`,
    );
  if (p99TargetMs !== null) {
    rec.figure(`${label}: p50 (ms)`, round(percentile(all, 50)));
    rec.expect(`${label}: p99 (ms)`, round(percentile(all, 99)), '<=', p99TargetMs);
    rec.expect(`${label}: errors`, result.errors.length, '==', 0);
  } else {
    rec.figure(`${label}: p50 / p99 (ms)`, `${round(percentile(all, 50))} / ${round(percentile(all, 99))}`);
    rec.figure(`${label}: errors`, result.errors.length);
  }
  rec.figure(`${label}: manual compactions requested (failed)`, `${result.compactions.requested} (${result.compactions.failed})`);
  if (result.errors.length > 0) rec.note(`${label} errors (first 5): ${result.errors.slice(0, 5).join('; ')}`);
}

export async function runLoad(options: LoadOptions): Promise<ScenarioResult> {
  const rec = new ScenarioRecorder('load', 'Load: concurrent agents against one API process', options.variant);
  const random = seededRandom(options.seed);
  const stack = await startChaosStack(options.logDir ? { logDir: options.logDir } : {});
  try {
    // CHAOS_PROFILE_API=<dir>: the API process writes a CPU profile there when it stops (what the p99 spends)
    const profileDir = process.env['CHAOS_PROFILE_API'];
    const api = await stack.startApi({}, profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []);
    const logFile = path.join(stack.logDir, 'compactd.log');
    const http = nodeHttp(api.url, stack.keys.tenant);
    const ledger = new AppendLedger();
    const ids = await seedConversations(apiCalls(http), ledger, 'load', pickConversations(options.clients, 1_000), POLICY, {
      contextLimit: CONTEXT_LIMIT,
    });
    if (options.worker !== false) {
      const summarizer = options.summarizer ?? 'llm-sim';
      const sim = summarizer === 'llm-sim' ? await stack.startLlmSimProcess(['--profile', 'haiku']) : null;
      await stack.startWorker(sim ? { ANTHROPIC_BASE_URL: sim.url, COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5' } : {}, 'worker-load');
    }
    const [low, high] = options.thinkMs;
    const cpu = () => sampleCpu([stack.pg.dataDir]);
    const paced = await phase(http, ids, ledger, {
      warmupMs: options.warmupMs,
      durationMs: options.durationMs,
      think: () => low + random() * (high - low),
      compactionsPerSecond: options.compactionsPerSecond,
      random,
      cpu,
    });
    recordPhase(rec, `${options.clients} agents, ${low}-${high} ms between rounds`, paced, options.p99TargetMs, logFile);
    const saturated = await phase(http, ids, ledger, {
      warmupMs: 0,
      durationMs: options.saturationMs,
      think: () => 0,
      compactionsPerSecond: options.compactionsPerSecond,
      random,
      cpu,
    });
    recordPhase(rec, `${options.clients} clients without pauses (saturation)`, saturated, null, logFile);

    // a graceful stop: the profile is written on exit
    if (profileDir) await api.process.kill('SIGTERM');
    recordCrashes(rec, stack.crashes);
    const stillActive = await waitForTerminalJobs(stack.db.db, 60_000);
    const statuses = await jobStatusCounts(stack.db.db);
    rec.figure(
      'compactions during the run (completed / noop / failed)',
      `${statuses['completed'] ?? 0} / ${statuses['noop'] ?? 0} / ${statuses['failed'] ?? 0}`,
    );
    rec.expect('jobs not terminal afterwards', stillActive, '==', 0);
    const history = await checkHistories(stack.db.db, ledger);
    rec.expect('messages lost or duplicated', history.lost + history.duplicated + history.unexpected, '==', 0);
    const state = await checkState(stack.db.db);
    rec.expect('partial commits or counter mismatches', state.partialCommitRows + state.counterMismatches, '==', 0);
    rec.note(
      `One \`compactd api\` process (default pool of 10 Postgres connections), one worker process summarizing through \`compactd llm-sim --profile haiku\` ` +
        `(a process of its own), private Postgres and Redis on ` +
        `this machine (${cpus().length} cores), load generated in the harness's process with node:http (keep-alive). Each client owns a ` +
        `conversation seeded from the shared transcripts (context limit ${CONTEXT_LIMIT} tokens, policy ${JSON.stringify(POLICY)}: automatic compaction ` +
        `runs when a conversation reaches its trigger) and loops: append one message, read the Anthropic context, pause. ${options.compactionsPerSecond} manual compaction request(s) per second ` +
        'run alongside. Latency is measured at the client, per request.',
    );
  } finally {
    await stack.close();
  }
  return rec.finish();
}
