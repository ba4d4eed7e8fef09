import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import pino from 'pino';

import { TEST_REDIS_URL } from '../../harness/service-urls.js';
import { buildApp } from '../../src/api/app.js';
import type { ApiDeps } from '../../src/api/deps.js';
import { loadConfig } from '../../src/config/env.js';
import { createApiKey } from '../../src/db/repos/api-keys.js';
import { countTokens } from '../../src/lib/count-tokens.js';
import { createTestDatabase, type TestDatabase } from './db.js';

export interface TestApi {
  app: FastifyInstance;
  db: TestDatabase;
  redis: Redis;
  /** API key of tenant "t1" */
  key: string;
  /** API key of another tenant */
  otherKey: string;
  auth(key?: string): { authorization: string };
  close(): Promise<void>;
}

/**
 * The real app over a fresh database and the real Redis, driven with `app.inject()`.
 * `overrides` may be a function of that database (e.g. a second pool over it).
 */
export async function createTestApi(
  overrides: Partial<ApiDeps> | ((db: TestDatabase) => Partial<ApiDeps>) = {},
  env: Record<string, string> = {},
): Promise<TestApi> {
  const db = await createTestDatabase();
  const config = loadConfig({ DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, ...env });
  const redis = new Redis(TEST_REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  const app = await buildApp({
    config,
    db: db.db,
    sql: db.sql,
    redis,
    logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
    countTokens,
    afterAppend: async () => null,
    compactions: { enqueue: async () => {}, cancel: async () => {} },
    ...(typeof overrides === 'function' ? overrides(db) : overrides),
  });
  const { key } = await createApiKey(db.db, { tenantName: 't1' });
  const { key: otherKey } = await createApiKey(db.db, { tenantName: 't2' });
  return {
    app,
    db,
    redis,
    key,
    otherKey,
    auth: (k = key) => ({ authorization: `Bearer ${k}` }),
    close: async () => {
      await app.close();
      redis.disconnect();
      await db.drop();
    },
  };
}
