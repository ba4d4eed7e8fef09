import { Redis } from 'ioredis';
import postgres from 'postgres';
import { runMigrations } from '../../src/db/migrate.js';
import { databaseUrl, TEMPLATE_DB, TEST_DB_PREFIX, TEST_REDIS_URL } from './services.js';

/**
 * Once per run: check both services answer (failing loudly with the URL tried, never
 * skipping), drop databases left by earlier failed runs, and migrate a template database
 * that every test file clones (CREATE DATABASE … TEMPLATE is much faster than migrating).
 */
export default async function setup(): Promise<void> {
  const admin = postgres(databaseUrl('postgres'), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await admin`select 1`;
  } catch (error) {
    throw new Error(`integration tests need Postgres at ${databaseUrl('postgres')}: ${(error as Error).message}`);
  }
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000 });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(`integration tests need Redis at ${TEST_REDIS_URL}: ${(error as Error).message}`);
  } finally {
    redis.disconnect();
  }
  try {
    const stale = await admin<{ datname: string }[]>`select datname from pg_database where datname like ${`${TEST_DB_PREFIX}%`} or datname = ${TEMPLATE_DB}`;
    for (const { datname } of stale) await admin.unsafe(`drop database if exists "${datname}" with (force)`);
    await runMigrations(databaseUrl(TEMPLATE_DB));
  } finally {
    await admin.end({ timeout: 5 });
  }
}
