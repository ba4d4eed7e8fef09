import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import type { FastifyInstance } from 'fastify';
import pino from 'pino';

import {
  type CompactdProcess,
  freePort,
  type PrivatePostgres,
  type PrivateRedis,
  spawnCompactd,
  startPrivatePostgres,
  startPrivateRedis,
} from '../../harness/index.js';
import { buildApp } from '../../src/api/app.js';
import { createDeps, type Deps } from '../../src/app/deps.js';
import { runShutdown } from '../../src/app/shutdown.js';
import { apiDepsFrom } from '../../src/app/start-api.js';
import { loadConfig } from '../../src/config/env.js';
import { createDb, type DbHandle } from '../../src/db/client.js';
import { runMigrations } from '../../src/db/migrate.js';
import { createApiKey, revokeApiKey } from '../../src/db/repos/api-keys.js';

/**
 * One scenario's world: a private Postgres cluster and a private redis-server (so they can
 * be restarted and flushed), a migrated database, API keys of two tenants (plus a revoked
 * one), and helpers to run compactd's API and workers as child processes or in-process.
 */

export interface ChaosKeys {
  /** tenant `chaos` */
  tenant: string;
  /** tenant `chaos-other` */
  other: string;
  /** a key of tenant `chaos` that was revoked */
  revoked: string;
}

export interface ChaosStack {
  pg: PrivatePostgres;
  redis: PrivateRedis;
  databaseUrl: string;
  /** the harness's own pool (for checks); separate from every compactd process */
  db: DbHandle;
  /** base environment of every compactd process of this stack */
  env: Record<string, string>;
  prefix: string;
  keys: ChaosKeys;
  logDir: string;
  processes: CompactdProcess[];
  /** api and worker processes that exited without being killed by the harness (each was started again) */
  crashes: Crash[];
  startWorker(extraEnv?: Record<string, string>, name?: string): Promise<CompactdProcess>;
  /** `nodeArgs`: options for node itself (a CPU profile: `--cpu-prof`, which NODE_OPTIONS refuses) */
  startApi(extraEnv?: Record<string, string>, nodeArgs?: string[]): Promise<{ url: string; process: CompactdProcess }>;
  /** `compactd llm-sim` as a process of its own (so its CPU is not the harness's) */
  startLlmSimProcess(args?: string[]): Promise<{ url: string; process: CompactdProcess }>;
  /** the API in this process (for `app.inject`), over its own deps */
  inlineApp(
    extraEnv?: Record<string, string>,
    options?: { logTo?: (line: string) => void },
  ): Promise<{ app: FastifyInstance; deps: Deps; close(): Promise<void> }>;
  close(): Promise<void>;
}

export interface ChaosStackOptions {
  /** AOF on the private Redis, so a restart keeps the queues */
  redisAppendOnly?: boolean;
  env?: Record<string, string>;
  logDir?: string;
}

export async function startChaosStack(options: ChaosStackOptions = {}): Promise<ChaosStack> {
  const pg = await startPrivatePostgres();
  const redis = await startPrivateRedis({ appendOnly: options.redisAppendOnly ?? false });
  const databaseUrl = pg.url('compactd');
  await runMigrations(databaseUrl);
  const db = createDb(databaseUrl, { max: 5, name: 'chaos-harness' });
  const prefix = `chaos${randomUUID().replaceAll('-', '').slice(0, 8)}`;
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    COMPACTD_QUEUE_PREFIX: prefix,
    // The reconciler sweeps often here, so lost jobs are found within the run's bounds.
    COMPACTD_RECONCILE_EVERY_MS: '2000',
    COMPACTD_RECONCILE_IDLE_MS: '3000',
    ...options.env,
  };
  const keys = await createKeys(db);
  const logDir = options.logDir ?? mkdtempSync(path.join(tmpdir(), 'compactd-chaos-'));
  const processes: CompactdProcess[] = [];
  const crashes: Crash[] = [];
  let closing = false;
  const inline = inlineApps(env);
  return {
    pg,
    redis,
    databaseUrl,
    db,
    env,
    prefix,
    keys,
    logDir,
    processes,
    crashes,
    ...launchers(env, path.join(logDir, 'compactd.log'), processes, crashes, () => closing),
    inlineApp: inline.start,
    async close() {
      closing = true;
      await Promise.all(processes.map((p) => p.kill('SIGKILL')));
      await inline.closeAll();
      await db.close();
      await Promise.allSettled([pg.close(), redis.close()]);
    },
  };
}

/** How long the harness, like a supervisor, waits before starting a crashed process again. */
const RESTART_DELAY_MS = 1_000;

export interface Crash {
  name: string;
  at: number;
  exit: number | string;
  /** the last lines the process wrote */
  tail: string;
}

/**
 * Child processes of the stack, tracked so `close()` kills every one. Like a supervisor
 * (compose's `restart: unless-stopped`), the stack starts again, with the same environment,
 * any api or worker process that exits without the harness having killed it, and records
 * the crash: the suites report crashes, they do not hide them.
 */
function launchers(env: Record<string, string>, logFile: string, processes: CompactdProcess[], crashes: Crash[], closing: () => boolean) {
  let workerCount = 0;
  const supervise = async (start: () => CompactdProcess): Promise<CompactdProcess> => {
    const proc = start();
    processes.push(proc);
    let served = false;
    proc.ready.then(
      () => (served = true),
      () => undefined,
    );
    void proc.exited.then(async (exit) => {
      if (proc.killedAt !== null || closing()) return;
      // A process that never got ready (its database still down, say) is a failed restart, not a new crash.
      if (served) crashes.push({ name: proc.name, at: Date.now(), exit, tail: proc.output().trim().split('\n').slice(-6).join('\n') });
      await new Promise((resolve) => setTimeout(resolve, RESTART_DELAY_MS));
      if (!closing()) void supervise(start).catch(() => undefined);
    });
    await proc.ready;
    return proc;
  };
  return {
    startWorker: (extraEnv: Record<string, string> = {}, name = `worker-${++workerCount}`) =>
      supervise(() => spawnCompactd('worker', { ...env, ...extraEnv }, { name, logFile })),
    async startApi(extraEnv: Record<string, string> = {}, nodeArgs: string[] = []) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const readyWhen = async () => (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) })).ok;
      const proc = await supervise(() =>
        spawnCompactd('api', { ...env, HOST: '127.0.0.1', PORT: String(port), ...extraEnv }, { name: 'api', logFile, readyWhen, nodeArgs }),
      );
      return { url, process: proc };
    },
    async startLlmSimProcess(args: string[] = []) {
      const port = await freePort();
      const proc = spawnCompactd('llm-sim', {}, { name: 'llm-sim', logFile, args: ['--port', String(port), ...args] });
      processes.push(proc);
      await proc.ready;
      return { url: `http://127.0.0.1:${port}`, process: proc };
    },
  };
}

/** The API built in this process (for `app.inject`), over deps of its own. */
function inlineApps(env: Record<string, string>) {
  const closers: Array<() => Promise<void>> = [];
  return {
    async start(extraEnv: Record<string, string> = {}, options: { logTo?: (line: string) => void } = {}) {
      const config = loadConfig({ ...env, ...extraEnv });
      const logTo = options.logTo;
      const logger = logTo
        ? pino({ level: 'debug' }, { write: (line: string) => logTo(line) })
        : pino({ level: process.env['CHAOS_LOG_LEVEL'] ?? 'silent' });
      const { deps, closeSteps } = createDeps(config, { logger, name: 'chaos-inline' });
      const app = await buildApp(apiDepsFrom(deps));
      await app.ready();
      const close = async () => {
        await runShutdown([{ name: 'http', run: () => app.close() }, ...closeSteps], 10_000, logger);
      };
      closers.push(close);
      return { app, deps, close };
    },
    closeAll: async () => {
      await Promise.allSettled(closers.map((close) => close()));
    },
  };
}

async function createKeys(db: DbHandle): Promise<ChaosKeys> {
  const tenant = await createApiKey(db.db, { tenantName: 'chaos' });
  const other = await createApiKey(db.db, { tenantName: 'chaos-other' });
  const revoked = await createApiKey(db.db, { tenantName: 'chaos', name: 'revoked' });
  if ((await revokeApiKey(db.db, revoked.id)) !== 1) throw new Error('could not revoke the test key');
  return { tenant: tenant.key, other: other.key, revoked: revoked.key };
}
