import { randomBytes } from 'node:crypto';

import type postgres from 'postgres';

import { type CompactdProcess, createScratchDatabase, freePort, runningServiceUrls, spawnCompactd } from '../../harness/index.js';
import { type LlmSim, startLlmSim } from '../../src/llm-sim/server.js';
import { deleteQueueKeys } from '../../src/queue/cleanup.js';
import { ApiClient } from './api-client.js';

/**
 * The service under test, started the way an operator runs it: a `compactd api` child and a
 * `compactd worker` child (harness/compactd-process.ts) over a bench database of their own
 * (created here, migrated by the API on start, dropped at the end), a queue prefix of their
 * own on the running Redis, and llm-sim in this process (so the bench reads its call log
 * directly). LLM limits are raised above the defaults so the provider-wide limiter is not
 * what the bench measures (docs/configuration.md: COMPACTD_LLM_*).
 */
export interface BenchServices {
  dbUrl: string;
  redisUrl: string;
  prefix: string;
  api: ApiClient;
  apiChild: CompactdProcess;
  /** restarts the API child on the same port (e.g. with `--cpu-prof`) */
  restartApi(options?: { cpuProfDir?: string }): Promise<void>;
  worker: CompactdProcess | null;
  /** every worker child running, `worker` first (more than one after startWorkers) */
  workers: CompactdProcess[];
  /** API children started by startExtraApis, each on its own port over the same Postgres and Redis */
  extraApis: Array<{ child: CompactdProcess; api: ApiClient }>;
  sim: LlmSim;
  /** direct read access to the bench database (job rows, plans) */
  sql: postgres.Sql;
  /** environment shared by every child */
  env: Record<string, string>;
  /** (re)starts the worker child; extra env overrides the defaults (e.g. concurrency) */
  startWorker(extra?: Record<string, string>, options?: { cpuProfDir?: string }): Promise<CompactdProcess>;
  /** replaces the running workers with `count` worker children (they share the queues) */
  startWorkers(count: number, extra?: Record<string, string>): Promise<CompactdProcess[]>;
  /** stops every worker child */
  stopWorker(): Promise<void>;
  /** starts `count` more API children on free ports; returns their clients (same key as `api`) */
  startExtraApis(count: number): Promise<ApiClient[]>;
  stopExtraApis(): Promise<void>;
  close(): Promise<void>;
}

export const BENCH_LLM_ENV = {
  COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5',
  COMPACTD_LLM_CONCURRENCY: '64',
  COMPACTD_LLM_RPM: '1000000',
  COMPACTD_LLM_TIMEOUT_MS: '300000',
} as const;

/**
 * A bench child: every log line kept (the phase timing reads the worker's records), and an
 * exit the bench did not ask for (a crash) said with its last lines, or a failed scenario
 * only says "fetch failed".
 */
function spawnBenchChild(role: 'api' | 'worker', env: Record<string, string>, options: { cpuProfDir?: string } = {}): CompactdProcess {
  const nodeArgs = options.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfDir] : [];
  const child = spawnCompactd(role, env, { nodeArgs, keepLines: true });
  void child.exited.then((how) => {
    if (child.killedAt === null && how !== 0)
      process.stderr.write(
        `compactd ${role} exited with code ${how}; its last lines:\n${child.output().trim().split('\n').slice(-10).join('\n')}\n`,
      );
  });
  return child;
}

export async function startServices(): Promise<BenchServices> {
  const { databaseUrl: serverUrl, redisUrl } = runningServiceUrls();
  const prefix = `bench${randomBytes(6).toString('hex')}`;
  const database = await createScratchDatabase({ serverUrl, namePrefix: 'compactd_bench_', migrate: false, max: 4 });
  const sim = await startLlmSim({ host: '127.0.0.1', port: 0, keepBodies: 5_000, logLimit: 200_000 });
  const key = `bench-${randomBytes(16).toString('hex')}`;
  const port = await freePort();
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    COMPACTD_QUEUE_PREFIX: prefix,
    ANTHROPIC_BASE_URL: sim.url,
    OPENAI_BASE_URL: `${sim.url}/v1`,
    // compactd's own provider keys (llm-sim takes any): the gateway runs a provider's compaction
    // only for requests made on them (bench scenario 11)
    ANTHROPIC_API_KEY: 'sk-ant-bench',
    OPENAI_API_KEY: 'sk-openai-bench',
    ...BENCH_LLM_ENV,
    // The bench is one tenant enqueueing up to thousands of compactions at once: the per-tenant
    // quotas (a guard against one tenant starving others) would answer 429 and measure nothing.
    COMPACTD_TENANT_MAX_ACTIVE: '1000000',
    COMPACTD_TENANT_COMPACTIONS_PER_MINUTE: '1000000',
  };
  const spawnApi = (apiPort: number, options: { cpuProfDir?: string } = {}) =>
    spawnBenchChild('api', { ...env, PORT: String(apiPort), COMPACTD_BOOTSTRAP_KEY: key }, options);
  const startApi = async (options: { cpuProfDir?: string } = {}) => {
    const child = spawnApi(port, options);
    await child.ready;
    return child;
  };
  const startWorkerChild = async (extra: Record<string, string>, options: { cpuProfDir?: string } = {}) => {
    const worker = spawnBenchChild('worker', { ...env, ...extra }, options);
    services.workers.push(worker);
    await worker.ready;
    return worker;
  };
  const apiChild = await startApi();
  const sql = database.sql;
  // postgres.js learns the array types on its first connection; a query that binds an array
  // before that (compactAll's `= any(...)`) is sent as a malformed literal
  await sql`select 1`;

  const services: BenchServices = {
    dbUrl: database.url,
    redisUrl,
    prefix,
    api: new ApiClient(`http://127.0.0.1:${port}`, key),
    apiChild,
    async restartApi(options = {}) {
      await services.apiChild.stop();
      services.apiChild = await startApi(options);
    },
    worker: null,
    workers: [],
    extraApis: [],
    sim,
    sql,
    env,
    async startWorker(extra = {}, options = {}) {
      await services.stopWorker();
      const worker = await startWorkerChild(extra, options);
      services.worker = worker;
      return worker;
    },
    async startWorkers(count, extra = {}) {
      await services.stopWorker();
      const started = await Promise.all(Array.from({ length: count }, () => startWorkerChild(extra)));
      services.worker = started[0] ?? null;
      return started;
    },
    async stopWorker() {
      const running = services.workers;
      services.workers = [];
      services.worker = null;
      await Promise.all(running.map((w) => w.stop()));
    },
    async startExtraApis(count) {
      const started: Array<{ child: CompactdProcess; api: ApiClient }> = [];
      for (let i = 0; i < count; i += 1) {
        const apiPort = await freePort();
        const entry = { child: spawnApi(apiPort), api: new ApiClient(`http://127.0.0.1:${apiPort}`, key) };
        // tracked before it is up, so close() stops it even when it never listens
        services.extraApis.push(entry);
        started.push(entry);
      }
      await Promise.all(started.map((entry) => entry.child.ready));
      return started.map((entry) => entry.api);
    },
    async stopExtraApis() {
      const running = services.extraApis;
      services.extraApis = [];
      await Promise.all(running.map((a) => a.child.stop()));
    },
    async close() {
      await services.stopWorker();
      await services.stopExtraApis();
      await services.apiChild.stop();
      await sim.close();
      await deleteQueueKeys(redisUrl, prefix);
      await database.drop();
    },
  };
  return services;
}
