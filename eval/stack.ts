import { randomUUID } from 'node:crypto';

import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import postgres from 'postgres';

import { startInProcess } from '../src/app/in-process.js';
import { loadConfig } from '../src/config/env.js';
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
  const service = await startInProcess(config, { logger, tenantName: 'eval' });
  return {
    app: service.app,
    auth: { authorization: `Bearer ${service.key}` },
    close: async () => {
      await service.close();
      await dropDatabase(databaseUrlFor(base, 'postgres'), name);
    },
  };
}
