import { Agent, request } from 'node:http';

import { type CorpusConversation, liveTurn, pickConversations } from '../../lib/corpus.js';
import { apiCalls, fetchHttp } from '../../lib/http.js';
import { AppendLedger } from '../../lib/invariants.js';
import { collectFailedJobs } from '../../lib/job-errors.js';
import { overlapping, readFigures, startReadProbe } from '../../lib/read-probe.js';
import { round, type ScenarioRecorder } from '../../lib/result.js';
import { seedConversations } from '../../lib/seed.js';
import { simEnv } from '../../lib/sims.js';
import { startChaosStack } from '../../lib/stack.js';
import { type AbuseContext, expectNoCrash, isActive, pause, requestCompaction, stackOptions, TARGETS, waitForJob } from './common.js';

/**
 * Thousands of `GET /v1/jobs/:id?wait=…` long-polls on one running job (its LLM call held for
 * `jobMs` by llm-sim's fixed latency), while another tenant reads its own conversation in a
 * loop: a waiter that re-reads its row on a timer shares the pool with every other request.
 * Afterwards, a job is made to fail on purpose (every LLM call answers 500 under
 * `onLLMFailure: fail`), so the suite sees at least one failed job's error.
 */

export interface LongPollOptions {
  waiters: number;
  /** how long the job's LLM call takes (the waiters wait about this long) */
  jobMs: number;
}

/** Seconds each waiter asks to wait (the API's maximum). */
const WAIT_SECONDS = 60;

interface WaiterOutcome {
  status: number | string;
  jobStatus: string | null;
  /** epoch ms of the answer */
  at: number;
}

/** One long-poll over its own connection (node:http: lighter than fetch for thousands of sockets). */
function openWaiter(baseUrl: string, key: string, jobId: string, agent: Agent, onTerminal: () => void): Promise<WaiterOutcome> {
  return new Promise((resolve) => {
    const done = (status: number | string, jobStatus: string | null) => resolve({ status, jobStatus, at: Date.now() });
    const req = request(
      `${baseUrl}/v1/jobs/${jobId}?wait=${WAIT_SECONDS}`,
      { agent, headers: { authorization: `Bearer ${key}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error) => done(error.message, null));
        res.on('end', () => {
          let jobStatus: string | null;
          try {
            jobStatus = res.statusCode === 200 ? (JSON.parse(Buffer.concat(chunks).toString()) as { status: string }).status : null;
          } catch {
            jobStatus = null;
          }
          if (jobStatus !== null && !isActive(jobStatus)) onTerminal();
          done(res.statusCode ?? 'no status', jobStatus);
        });
      },
    );
    req.setTimeout((WAIT_SECONDS + 30) * 1000, () => req.destroy(new Error('timeout')));
    req.on('error', (error) => done(error.message, null));
    req.end();
  });
}

/** Until the API's `compactd_job_waiters` gauge counts `count` open long-polls. */
async function waitForOpenWaiters(baseUrl: string, count: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let open = 0;
  while (Date.now() < deadline) {
    const text = await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) }).then(
      (res) => res.text(),
      () => '',
    );
    open = Number(/^compactd_job_waiters (\d+)$/m.exec(text)?.[1] ?? 0);
    if (open >= count) return;
    await pause(50);
  }
  throw new Error(`${open} of ${count} long-polls open after ${timeoutMs} ms`);
}

async function waitUntilRunning(baseUrl: string, key: string, jobId: string, timeoutMs: number): Promise<string> {
  const calls = apiCalls(fetchHttp(baseUrl, key, 10_000));
  const deadline = Date.now() + timeoutMs;
  let status = 'unknown';
  while (Date.now() < deadline) {
    status = (await calls.job(jobId)).status;
    if (status === 'summarizing' || status === 'resummarizing' || !isActive(status)) return status;
    await pause(200);
  }
  return status;
}

interface Setting {
  baseUrl: string;
  keys: { tenant: string; other: string };
  jobId: string;
  agent: Agent;
}

/** The waiters on one running job, and the bystander's reads before and while they wait. */
async function measureWaiters(rec: ScenarioRecorder, at: Setting, options: LongPollOptions): Promise<void> {
  const probe = startReadProbe(at.baseUrl, at.keys.other, '/v1/conversations/lp-read', { timeoutMs: 30_000, everyMs: 50 });
  await pause(2_000);
  const baselineUntil = Date.now();

  let finishedAt = 0;
  let signalFinished: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (signalFinished = resolve));
  const onTerminal = () => {
    if (finishedAt === 0) finishedAt = Date.now();
    signalFinished();
  };
  const waitersFrom = Date.now();
  const waiters = Array.from({ length: options.waiters }, () => openWaiter(at.baseUrl, at.keys.tenant, at.jobId, at.agent, onTerminal));
  // The waiters' arrival is a burst of requests, not waiting; the waiting starts once the API
  // holds them all. (A plain read of the job sent after them is no such mark: on a connection
  // of its own it overtakes most of the burst, answered while the API was still accepting and
  // authenticating the waiters for seconds, so reads counted as "while they wait" carried it.)
  const t0 = performance.now();
  const takenUp = await waitForOpenWaiters(at.baseUrl, options.waiters, 60_000).then(
    () => performance.now() - t0,
    () => Number.NaN,
  );
  const waitingFrom = Date.now();
  // Reads count from then until the job's end reaches the waiters.
  await Promise.race([finished, pause(options.jobMs + WAIT_SECONDS * 1000)]);
  const readsUntil = finishedAt || Date.now();
  const samples = await probe.stop();
  const outcomes = await Promise.all(waiters);

  const baseline = readFigures(samples.filter((x) => x.at + x.ms <= baselineUntil));
  const arrival = readFigures(overlapping(samples, waitersFrom, waitingFrom));
  // reads sent once the waiters are waiting (one sent during their arrival carries the arrival's wait)
  const during = readFigures(samples.filter((x) => x.at >= waitingFrom && x.at <= readsUntil));
  const terminal = outcomes.filter((o) => o.jobStatus !== null && !isActive(o.jobStatus));
  const lastAnswer = terminal.reduce((latest, o) => Math.max(latest, o.at), 0);
  const refused = new Map<string, number>();
  for (const o of outcomes.filter((x) => x.status !== 200)) refused.set(String(o.status), (refused.get(String(o.status)) ?? 0) + 1);

  rec.figure('long-polls: waiters on the running job', options.waiters);
  rec.figure("long-polls: other tenant's read without waiters, p50 / max (ms)", `${baseline.p50} / ${baseline.max}`);
  rec.figure('long-polls: waiters all open in the API after (ms)', round(takenUp));
  rec.figure("long-polls: other tenant's read while the waiters arrive, p50 / max (ms)", `${arrival.p50} / ${arrival.max}`);
  rec.figure(
    "long-polls: other tenant's reads while they wait (failed), over (s)",
    `${during.reads} (${during.failed}), ${round(Math.max(0, readsUntil - waitingFrom) / 1000)}`,
  );
  rec.expect("long-polls: other tenant's read while they wait, p50 (ms)", during.p50, '<=', TARGETS.waitingReadP50Ms);
  rec.expect("long-polls: other tenant's read while they wait, max (ms)", during.max, '<=', TARGETS.waitingReadMaxMs);
  rec.expect(`long-polls: waiters answered with the job's terminal status (of ${options.waiters})`, terminal.length, '==', options.waiters);
  rec.figure(
    'long-polls: waiters not answered 200 (by status)',
    refused.size === 0 ? 'none' : [...refused].map(([st, n]) => `${st}: ${n}`).join(', '),
  );
  rec.figure('long-polls: job end → last waiter answered (ms)', finishedAt && lastAnswer ? lastAnswer - finishedAt : 'n/a');
}

/** A job made to fail from outside: every LLM call answers 500, and the request asks to fail rather than fall back. */
async function provokeLlmFailure(rec: ScenarioRecorder, simUrl: string, baseUrl: string, key: string): Promise<string> {
  const config = await fetch(`${simUrl}/_sim/config`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ profile: 'instant', faults: { rates: { server_error: 1 } } }),
  });
  if (!config.ok) throw new Error(`llm-sim config: HTTP ${config.status}`);
  const jobId = await requestCompaction(baseUrl, key, 'lp-1', { strategy: 'summarize', keepRecent: 4, onLLMFailure: 'fail' });
  const failed = await waitForJob(baseUrl, key, jobId, 120_000);
  rec.figure('LLM fault (every call 500, onLLMFailure fail): job', `${failed.status} in ${round(failed.seconds)} s`);
  return jobId;
}

export async function runLongPolls(ctx: AbuseContext, options: LongPollOptions): Promise<void> {
  const { rec } = ctx;
  const stack = await startChaosStack(stackOptions(ctx));
  const started = Date.now();
  const jobIds: string[] = [];
  let baseUrl = '';
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  try {
    const api = await stack.startApi();
    baseUrl = api.url;
    const sim = await stack.startLlmSimProcess(['--profile', `fixed:${options.jobMs}`]);
    await stack.startWorker(simEnv(sim), 'worker-long-polls');
    const tenant = apiCalls(fetchHttp(api.url, stack.keys.tenant, 60_000));
    const other = apiCalls(fetchHttp(api.url, stack.keys.other, 60_000));
    const [waited, failing] = pickConversations(2, 1_000) as [CorpusConversation, CorpusConversation];
    await seedConversations(tenant, new AppendLedger(), 'lp', [waited, failing], { auto: false });
    await other.createConversation('lp-read', { policy: { auto: false } });
    await other.append(
      'lp-read',
      Array.from({ length: 6 }, (_, i) => liveTurn(i)),
    );

    const jobId = await requestCompaction(api.url, stack.keys.tenant, 'lp-0', { strategy: 'summarize', keepRecent: 4 });
    jobIds.push(jobId);
    rec.figure('long-polls: job status when the waiters came', await waitUntilRunning(api.url, stack.keys.tenant, jobId, 60_000));
    await measureWaiters(rec, { baseUrl, keys: stack.keys, jobId, agent }, options);
    jobIds.push(await provokeLlmFailure(rec, sim.url, api.url, stack.keys.tenant));
    expectNoCrash(rec, 'long-polls', stack, started);
    rec.note(
      `Long-polls: one API process (default pool), one worker summarizing through \`compactd llm-sim --profile fixed:${options.jobMs}\`, so the job's call ` +
        `takes ${options.jobMs / 1000} s. Once the job is running, tenant B reads its own conversation (GET /v1/conversations/:id) every 50 ms (sent on schedule, ` +
        `whether or not the last one answered; at most 50 in flight): 2 s alone, then while ${options.waiters} long-polls (GET /v1/jobs/:id?wait=${WAIT_SECONDS}, ` +
        'one connection each) of tenant A wait on the job, until the first of them is answered with its terminal status. The targets hold the reads sent while ' +
        "the waiters wait: from the moment the API's `compactd_job_waiters` gauge counts all of them (it holds them) to the job's end; the reads " +
        'during their arrival (connecting, authenticating: a burst of requests like any other) are reported apart.',
    );
  } finally {
    agent.destroy();
    if (baseUrl) ctx.failedJobs.push(...(await collectFailedJobs(baseUrl, stack.keys.tenant, 'long-polls', jobIds)));
    await stack.close();
  }
}
