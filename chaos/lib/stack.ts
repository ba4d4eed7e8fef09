import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../../src/api/app.js';
import { createDeps, type Deps } from '../../src/app/deps.js';
import { runShutdown } from '../../src/app/shutdown.js';
import { apiDepsFrom } from '../../src/app/start-api.js';
import { loadConfig } from '../../src/config/env.js';
import { createDb, type DbHandle } from '../../src/db/client.js';
import { runMigrations } from '../../src/db/migrate.js';
import { createApiKey, revokeApiKey } from '../../src/db/repos/api-keys.js';
import { freePort, startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from '../../test/helpers/private-services.js';
import { spawnCompactd, type CompactdProcess } from './processes.js';

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
  startWorker(extraEnv?: Record<string, string>, name?: string): Promise<CompactdProcess>;
  startApi(extraEnv?: Record<string, string>): Promise<{ url: string; process: CompactdProcess }>;
  /** `compactd llm-sim` as a process of its own (so its CPU is not the harness's) */
  startLlmSimProcess(args?: string[]): Promise<{ url: string; process: CompactdProcess }>;
  /** the API in this process (for `app.inject`), over its own deps */
  inlineApp(extraEnv?: Record<string, string>, options?: { logTo?: (line: string) => void }): Promise<{ app: FastifyInstance; deps: Deps; close(): Promise<void> }>;
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
  const inlineClosers: Array<() => Promise<void>> = [];
  let workerCount = 0;

  const stack: ChaosStack = {
    pg,
    redis,
    databaseUrl,
    db,
    env,
    prefix,
    keys,
    logDir,
    processes,
    async startWorker(extraEnv = {}, name = `worker-${++workerCount}`) {
      const proc = spawnCompactd('worker', { ...env, ...extraEnv }, { name, logFile: path.join(logDir, 'compactd.log') });
      processes.push(proc);
      await proc.ready;
      return proc;
    },
    async startApi(extraEnv = {}) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const proc = spawnCompactd('api', { ...env, HOST: '127.0.0.1', PORT: String(port), ...extraEnv }, {
        name: 'api',
        logFile: path.join(logDir, 'compactd.log'),
        readyWhen: async () => (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) })).ok,
      });
      processes.push(proc);
      await proc.ready;
      return { url, process: proc };
    },
    async startLlmSimProcess(args = []) {
      const port = await freePort();
      const proc = spawnCompactd('llm-sim', {}, { name: 'llm-sim', logFile: path.join(logDir, 'compactd.log'), args: ['--port', String(port), ...args] });
      processes.push(proc);
      await proc.ready;
      return { url: `http://127.0.0.1:${port}`, process: proc };
    },
    async inlineApp(extraEnv = {}, appOptions = {}) {
      const config = loadConfig({ ...env, ...extraEnv });
      const logTo = appOptions.logTo;
      const logger = logTo
        ? pino({ level: 'debug' }, { write: (line: string) => logTo(line) })
        : pino({ level: process.env['CHAOS_LOG_LEVEL'] ?? 'silent' });
      const { deps, closeSteps } = createDeps(config, { logger, name: 'chaos-inline' });
      const app = await buildApp(apiDepsFrom(deps));
      await app.ready();
      const close = async () => {
        await runShutdown([{ name: 'http', run: () => app.close() }, ...closeSteps], 10_000, logger);
      };
      inlineClosers.push(close);
      return { app, deps, close };
    },
    async close() {
      await Promise.all(processes.map((p) => p.kill('SIGKILL')));
      await Promise.allSettled(inlineClosers.map((close) => close()));
      await db.close();
      await Promise.allSettled([pg.close(), redis.close()]);
    },
  };
  return stack;
}

async function createKeys(db: DbHandle): Promise<ChaosKeys> {
  const tenant = await createApiKey(db.db, { tenantName: 'chaos' });
  const other = await createApiKey(db.db, { tenantName: 'chaos-other' });
  const revoked = await createApiKey(db.db, { tenantName: 'chaos', name: 'revoked' });
  if ((await revokeApiKey(db.db, revoked.id)) !== 1) throw new Error('could not revoke the test key');
  return { tenant: tenant.key, other: other.key, revoked: revoked.key };
}

/** Runs `fn` until it resolves, retrying errors (a service restarting) until `timeoutMs`. */
export async function retrying<T>(fn: () => Promise<T>, timeoutMs = 60_000, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
