import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import postgres from 'postgres';
import { buildApp } from '../src/api/app.js';
import { createDeps } from '../src/app/deps.js';
import { runShutdown, type ShutdownStep } from '../src/app/shutdown.js';
import { apiDepsFrom } from '../src/app/start-api.js';
import { runWorkers } from '../src/app/start-worker.js';
import { loadConfig } from '../src/config/env.js';
import { createApiKey } from '../src/db/repos/api-keys.js';
import { runMigrations } from '../src/db/migrate.js';

/**
 * The whole service in-process, as `compactd start` wires it: API + workers over a fresh
 * database of the eval's own (dropped afterwards) and a queue prefix of its own, driven
 * through `app.inject`. Nothing is mocked: the eval measures what the service does.
 */

export interface EvalStack {
  app: FastifyInstance;
  /** headers of the stack's API key */
  auth: { authorization: string };
  close(): Promise<void>;
}

export interface EvalStackOptions {
  /** base environment: DATABASE_URL names the server (its database name is replaced), REDIS_URL, provider keys */
  env: Record<string, string | undefined>;
  logLevel?: string;
}

function databaseUrlFor(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

export async function createEvalStack(options: EvalStackOptions): Promise<EvalStack> {
  const base = options.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/compactd';
  const name = `compactd_eval_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const databaseUrl = databaseUrlFor(base, name);
  await runMigrations(databaseUrl);
  const prefix = `eval${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const config = loadConfig({ ...options.env, DATABASE_URL: databaseUrl, COMPACTD_QUEUE_PREFIX: prefix });
  const logger = pino({ level: options.logLevel ?? 'silent' });
  const { deps, closeSteps } = createDeps(config, { logger, name: 'compactd-eval' });
  const workers = runWorkers(deps);
  const app = await buildApp(apiDepsFrom(deps));
  const { key } = await createApiKey(deps.db, { tenantName: 'eval' });
  const steps: ShutdownStep[] = [{ name: 'http', run: () => app.close() }, ...workers.steps, ...closeSteps];
  return {
    app,
    auth: { authorization: `Bearer ${key}` },
    close: async () => {
      await runShutdown(steps, 30_000, logger);
      await deleteQueueKeys(config.redisUrl, prefix);
      await dropDatabase(databaseUrlFor(base, 'postgres'), name);
    },
  };
}

async function deleteQueueKeys(redisUrl: string, prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `{${prefix}}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
