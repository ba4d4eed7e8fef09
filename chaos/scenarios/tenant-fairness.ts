import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';

import { JOBS } from '../../src/queue/catalog.js';
import { queuePrefix, QUEUES } from '../../src/queue/names.js';
import { type CorpusConversation, pickConversations } from '../lib/corpus.js';
import { apiCalls, fetchHttp } from '../lib/http.js';
import { AppendLedger, checkHistories, jobStatusCounts, waitForTerminalJobs } from '../lib/invariants.js';
import { recordCrashes } from '../lib/outcome.js';
import { round, ScenarioRecorder, type ScenarioResult } from '../lib/result.js';
import { seedConversations } from '../lib/seed.js';
import { startChaosStack } from '../lib/stack.js';

/**
 * Issues 15 §5 and 26 §9: tenant A's compaction time alone, and again while tenant B has just
 * asked for `flood` compactions at once, through one API and one worker process summarizing
 * through llm-sim, every concurrency at its default (COMPACTD_COMPACTION_CONCURRENCY 8,
 * COMPACTD_SUMMARIZE_CONCURRENCY 32, COMPACTD_LLM_CONCURRENCY 16). Fair share
 * (queue/fair-share.ts) serves A's steps between B's, and B's steps leave A a provider slot
 * (queue/fair-slots.ts); the target is A's time under the flood within 1.3× its time alone.
 * B's flood is accepted under the default quotas.
 */

export interface TenantFairnessOptions {
  variant: 'quick' | 'full';
  /** compactions tenant B asks for at once */
  flood: number;
  /** A's time under the flood over its time alone, at most */
  maxSlowdown: number;
  logDir?: string;
  /** extra environment of the worker, for experiments (the suite runs with none: the defaults) */
  workerEnv?: Record<string, string>;
}

export const TENANT_FAIRNESS_FULL: TenantFairnessOptions = { variant: 'full', flood: 200, maxSlowdown: 1.3 };
/**
 * The quick variant's smaller flood is enqueued and planned before A's compaction arrives, so
 * B's calls are all in flight, started together, when A's chunk is queued. In-flight calls are
 * not preempted: before B's steps left a reserve of provider slots to another active tenant,
 * A's chunk waited for one of them to end (measured 1.38–1.87× under the default concurrency,
 * up to 2.85× in earlier runs); with the reserve it starts at once. The quick variant runs in
 * `npm test`, beside other suites on two cores, where A's plan and finalize steps share the CPU
 * with B's (one run measured 1.87× with A's chunk waiting 0.13 s): its bound is 1.6×, which still
 * fails the regression it guards (no reserve: 2.16×, A's chunk waiting a whole call). The full
 * variant, run alone (`npm run chaos`), holds the 1.3× target.
 */
export const TENANT_FAIRNESS_QUICK: TenantFairnessOptions = { variant: 'quick', flood: 60, maxSlowdown: 1.6 };

const POLICY = { auto: false };
const REQUEST = { strategy: 'summarize', keepRecent: 4 };
/** distinct transcripts behind B's conversations (reused round robin: the flood's size is what matters) */
const B_DISTINCT = 20;

async function jobSeconds(stack: Awaited<ReturnType<typeof startChaosStack>>, jobId: string): Promise<number> {
  const [row] = await stack.db.db.execute<{ s: number }>(
    sql`select extract(epoch from finished_at - created_at)::float8 as s from compaction_jobs where id = ${jobId}`,
  );
  return Number(row?.s ?? Number.NaN);
}

/**
 * Where a job's time went, from its BullMQ steps' own timestamps: how long each step waited for
 * a worker (a chunk that was parked counts from its creation to its last start) and ran.
 */
async function jobBreakdown(stack: Awaited<ReturnType<typeof startChaosStack>>, jobId: string, chunks: number): Promise<string> {
  const redis = new Redis(stack.redis.url, { maxRetriesPerRequest: 1 });
  try {
    const step = async (queue: string, id: string) => {
      const [created, started, finished] = (
        await redis.hmget(`${queuePrefix(stack.prefix)}:${queue}:${id}`, 'timestamp', 'processedOn', 'finishedOn')
      ).map(Number);
      return { created: created ?? 0, started: started ?? 0, finished: finished ?? 0 };
    };
    const plan = await step(QUEUES.compaction, JOBS.plan.jobId({ jobId }));
    const parts = await Promise.all(
      Array.from({ length: chunks }, (_, chunkIndex) => step(QUEUES.summarize, JOBS.summarizeChunk.jobId({ jobId, chunkIndex }))),
    );
    const finalize = await step(QUEUES.compaction, JOBS.finalize.jobId({ jobId }));
    const s = (ms: number) => `${round(ms / 1000, 2)}`;
    const chunkWait = Math.max(0, ...parts.map((c) => c.started - c.created));
    const chunkRun = Math.max(0, ...parts.map((c) => c.finished - c.started));
    const childrenDone = Math.max(plan.finished, ...parts.map((c) => c.finished));
    return (
      `plan waited ${s(plan.started - plan.created)} s, ran ${s(plan.finished - plan.started)} s; ` +
      `${chunks} chunk(s) waited ${s(chunkWait)} s, ran ${s(chunkRun)} s; ` +
      `finalize waited ${s(finalize.started - childrenDone)} s, ran ${s(finalize.finished - finalize.started)} s`
    );
  } finally {
    redis.disconnect();
  }
}

/** Summarize step starts per summarize step: 1 when no step was ever parked (queue/fair-slots.ts). */
async function startsPerStep(stack: Awaited<ReturnType<typeof startChaosStack>>): Promise<number> {
  const redis = new Redis(stack.redis.url, { maxRetriesPerRequest: 1 });
  try {
    const keys = (await redis.keys(`${queuePrefix(stack.prefix)}:${QUEUES.summarize}:*-chunk-*`)).filter((key) => !key.includes(':logs'));
    const starts = await Promise.all(keys.map(async (key) => Number((await redis.hget(key, 'ats')) ?? 1)));
    return keys.length === 0 ? 0 : starts.reduce((a, b) => a + b, 0) / keys.length;
  } finally {
    redis.disconnect();
  }
}

async function chunkCount(stack: Awaited<ReturnType<typeof startChaosStack>>, jobId: string): Promise<number> {
  const [row] = await stack.db.db.execute<{ n: number }>(sql`select count(*)::int as n from compaction_chunks where job_id = ${jobId}`);
  return Number(row?.n ?? 0);
}

export async function runTenantFairness(options: TenantFairnessOptions): Promise<ScenarioResult> {
  const rec = new ScenarioRecorder(
    'tenant-fairness',
    "Tenant fairness: one tenant's compaction under another tenant's flood",
    options.variant,
  );
  const stack = await startChaosStack(options.logDir ? { logDir: options.logDir } : {});
  try {
    const api = await stack.startApi();
    const a = apiCalls(fetchHttp(api.url, stack.keys.tenant, 120_000));
    const b = apiCalls(fetchHttp(api.url, stack.keys.other, 120_000));
    const ledger = new AppendLedger();
    // A's is an ordinary conversation (a few chunks); B's are a mix, about one in four a long session
    const corpus = pickConversations(B_DISTINCT + 1, 4);
    const aConversation = corpus[0] as CorpusConversation;
    const others = corpus.slice(1);
    // Two copies of A's conversation: one compacted alone, one under the flood (same work both times).
    await seedConversations(a, ledger, 'a', [aConversation, aConversation], POLICY);
    const bConversations = Array.from({ length: options.flood }, (_, i) => others[i % others.length] as CorpusConversation);
    const bIds = await seedConversations(b, ledger, 'b', bConversations, POLICY);

    const sim = await stack.startLlmSimProcess(['--profile', 'haiku']);
    await stack.startWorker(
      { ANTHROPIC_BASE_URL: sim.url, COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5', ...options.workerEnv },
      'worker-fairness',
    );

    const waitDone = async (calls: typeof a, jobId: string) => {
      for (;;) {
        const job = await calls.job(jobId, 5);
        if (!['queued', 'planning', 'summarizing', 'resummarizing', 'committing'].includes(job.status)) return job;
      }
    };

    const aloneJob = await a.compact('a-0', REQUEST);
    const alone = await waitDone(a, aloneJob.id);
    const aloneSeconds = await jobSeconds(stack, aloneJob.id);

    const floodStarted = Date.now();
    const floodJobs = await Promise.all(bIds.map((id) => b.compact(id, REQUEST)));
    const floodAccepted = floodJobs.filter((j) => j.status === 'queued').length;
    const underJob = await a.compact('a-1', REQUEST);
    const under = await waitDone(a, underJob.id);
    const underSeconds = await jobSeconds(stack, underJob.id);
    const stillActive = await waitForTerminalJobs(stack.db.db, 600_000);
    const floodSeconds = (Date.now() - floodStarted) / 1000;

    rec.figure("A's compaction alone (s)", round(aloneSeconds, 2));
    rec.figure(`A's compaction under B's flood of ${options.flood} (s)`, round(underSeconds, 2));
    rec.figure("A's compaction alone, by step", await jobBreakdown(stack, aloneJob.id, await chunkCount(stack, aloneJob.id)));
    rec.figure("A's compaction under the flood, by step", await jobBreakdown(stack, underJob.id, await chunkCount(stack, underJob.id)));
    rec.expect("A's slowdown under the flood (×)", round(underSeconds / aloneSeconds, 2), '<=', options.maxSlowdown);
    rec.expect("A's compactions completed (of 2)", [alone, under].filter((j) => j.status === 'completed').length, '==', 2);
    rec.expect("B's flood accepted (202)", floodAccepted, '==', options.flood);
    rec.figure("B's flood drained in (s)", round(floodSeconds, 1));
    rec.figure('summarize step starts per step (parked steps start again)', round(await startsPerStep(stack), 2));
    const statuses = await jobStatusCounts(stack.db.db);
    rec.figure('jobs (completed / noop / failed)', `${statuses['completed'] ?? 0} / ${statuses['noop'] ?? 0} / ${statuses['failed'] ?? 0}`);
    rec.expect('jobs not terminal afterwards', stillActive, '==', 0);
    const history = await checkHistories(stack.db.db, ledger);
    rec.expect('messages lost or duplicated', history.lost + history.duplicated + history.unexpected, '==', 0);
    recordCrashes(rec, stack.crashes);
    rec.note(
      `One \`compactd api\` and one worker process (default quotas and concurrency${options.workerEnv ? `; ${JSON.stringify(options.workerEnv)}` : ''}) summarizing through \`compactd llm-sim --profile haiku\`; private Postgres and Redis. ` +
        `Tenant A compacts an ordinary conversation (request ${JSON.stringify(REQUEST)}) alone, then a copy of it right after tenant B asked for ${options.flood} compactions at once ` +
        `(${B_DISTINCT} distinct transcripts, reused). A job's time is its row's finished_at − created_at; the by-step figures are the BullMQ steps' own timestamps. ` +
        "Before fair share, a flood of 200 made another tenant's compaction take 34.6 s instead of 3.1 s (measured against a running service, not by this suite).",
    );
    rec.note(
      "Named limits. (1) A is active again within minutes of its first compaction, so B leaves it COMPACTD_TENANT_RESERVED_LLM_SLOTS (2) of the 16 provider slots and A's chunk starts at once; " +
        "a tenant not seen in the last 5 minutes waits for B's next calls to end (its step is parked first in line, and B's waiting steps park as soon as it shows up): up to about one call. " +
        "(2) The reserve covers a newcomer's first two chunks; a bigger compaction's further chunks take the slots B releases, ahead of B's (lower fair-share tags), at least half of them under a long flood. " +
        "(3) Plan and finalize steps share one process's CPU and Postgres with B's: their run times, not their waits, are what is left of the slowdown.",
    );
  } finally {
    await stack.close();
  }
  return rec.finish();
}
