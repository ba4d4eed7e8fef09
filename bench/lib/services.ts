import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';

import { Redis } from 'ioredis';
import postgres from 'postgres';

import { type LlmSim, startLlmSim } from '../../src/llm-sim/server.js';
import { ApiClient } from './api-client.js';
import { type CompactdChild, spawnCompactd } from './child.js';

/**
 * The service under test, started the way an operator runs it: a `compactd api` child and a
 * `compactd worker` child over a bench database of their own (created here, dropped at the
 * end), a queue prefix of their own on the local Redis, and llm-sim in this process (so the
 * bench reads its call log directly). LLM limits are raised above the defaults so the
 * provider-wide limiter is not what the bench measures (README: COMPACTD_LLM_*).
 */
export interface BenchServices {
  dbUrl: string;
  redisUrl: string;
  prefix: string;
  api: ApiClient;
  apiChild: CompactdChild;
  /** restarts the API child on the same port (e.g. with `--cpu-prof`) */
  restartApi(options?: { cpuProfDir?: string }): Promise<void>;
  worker: CompactdChild | null;
  /** every worker child running, `worker` first (more than one after startWorkers) */
  workers: CompactdChild[];
  /** API children started by startExtraApis, each on its own port over the same Postgres and Redis */
  extraApis: Array<{ child: CompactdChild; api: ApiClient }>;
  sim: LlmSim;
  /** direct read access to the bench database (job rows, plans) */
  sql: postgres.Sql;
  /** environment shared by every child */
  env: Record<string, string>;
  /** (re)starts the worker child; extra env overrides the defaults (e.g. concurrency) */
  startWorker(extra?: Record<string, string>, options?: { cpuProfDir?: string }): Promise<CompactdChild>;
  /** replaces the running workers with `count` worker children (they share the queues) */
  startWorkers(count: number, extra?: Record<string, string>): Promise<CompactdChild[]>;
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

const START_TIMEOUT_MS = 60_000;

export async function startServices(): Promise<BenchServices> {
  const base = new URL(process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
  const suffix = randomBytes(6).toString('hex');
  const dbName = `compactd_bench_${suffix}`;
  const prefix = `bench${suffix}`;
  const dbUrl = withDatabase(base, dbName);
  const admin = postgres(withDatabase(base, 'postgres'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${dbName}"`);
  await admin.end({ timeout: 5 });

  const sim = await startLlmSim({ host: '127.0.0.1', port: 0, keepBodies: 5_000, logLimit: 200_000 });
  const key = `bench-${randomBytes(16).toString('hex')}`;
  const port = await freePort();
  const env: Record<string, string> = {
    DATABASE_URL: dbUrl,
    REDIS_URL: redisUrl,
    COMPACTD_QUEUE_PREFIX: prefix,
    ANTHROPIC_BASE_URL: sim.url,
    OPENAI_BASE_URL: `${sim.url}/v1`,
    ...BENCH_LLM_ENV,
    // The bench is one tenant enqueueing up to thousands of compactions at once: the per-tenant
    // quotas (a guard against one tenant starving others) would answer 429 and measure nothing.
    COMPACTD_TENANT_MAX_ACTIVE: '1000000',
    COMPACTD_TENANT_COMPACTIONS_PER_MINUTE: '1000000',
  };
  const spawnApi = (apiPort: number, options: { cpuProfDir?: string } = {}) =>
    spawnCompactd('api', { env: { ...env, PORT: String(apiPort), COMPACTD_BOOTSTRAP_KEY: key }, ...options });
  const listening = (child: CompactdChild) => child.waitForLog((line) => line.includes('compactd api listening'), START_TIMEOUT_MS);
  const startApi = async (options: { cpuProfDir?: string } = {}) => {
    const child = spawnApi(port, options);
    await listening(child);
    return child;
  };
  const startWorkerChild = async (extra: Record<string, string>, options: { cpuProfDir?: string } = {}) => {
    const worker = spawnCompactd('worker', { env: { ...env, ...extra }, ...options });
    services.workers.push(worker);
    await worker.waitForLog((line) => line.includes('compactd workers started'), START_TIMEOUT_MS);
    return worker;
  };
  const apiChild = await startApi();
  const sql = postgres(dbUrl, { max: 4, onnotice: () => {} });
  // postgres.js learns the array types on its first connection; a query that binds an array
  // before that (compactAll's `= any(...)`) is sent as a malformed literal
  await sql`select 1`;

  const services: BenchServices = {
    dbUrl,
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
      const started: Array<{ child: CompactdChild; api: ApiClient }> = [];
      for (let i = 0; i < count; i += 1) {
        const apiPort = await freePort();
        const entry = { child: spawnApi(apiPort), api: new ApiClient(`http://127.0.0.1:${apiPort}`, key) };
        // tracked before it is up, so close() stops it even when it never listens
        services.extraApis.push(entry);
        started.push(entry);
      }
      await Promise.all(started.map((entry) => listening(entry.child)));
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
      await sql.end({ timeout: 5 });
      await sim.close();
      await deleteQueueKeys(redisUrl, prefix);
      const cleaner = postgres(withDatabase(base, 'postgres'), { max: 1, onnotice: () => {} });
      try {
        await cleaner.unsafe(`drop database if exists "${dbName}" with (force)`);
      } finally {
        await cleaner.end({ timeout: 5 });
      }
    },
  };
  return services;
}

function withDatabase(base: URL, name: string): string {
  const url = new URL(base.toString());
  url.pathname = `/${name}`;
  return url.toString();
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function deleteQueueKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
