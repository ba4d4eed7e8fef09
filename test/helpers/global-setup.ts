import { randomUUID } from 'node:crypto';

import { Redis } from 'ioredis';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';

import { provideTestServices } from '../../harness/provide-services.js';
import { databaseUrlIn, TEST_DB_PREFIX } from '../../harness/service-urls.js';
import { runMigrations } from '../../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDb: string;
  }
}

/**
 * Once per run: find the services (the given URLs, the local defaults, or testcontainers;
 * see harness/service-plan.ts), check both answer (failing loudly with the URL tried, never
 * skipping) and migrate a template database of this run that every test file clones
 * (CREATE DATABASE … TEMPLATE is much faster than migrating). Runs on one machine never
 * share a template, so two test runs at once do not disturb each other.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const services = await provideTestServices(process.env, (line) => process.stderr.write(`${line}\n`));
  const databaseUrl = (name: string) => databaseUrlIn(services.databaseUrl, name);
  const redisUrl = services.redisUrl;
  const template = `${TEST_DB_PREFIX}tpl_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const admin = postgres(databaseUrl('postgres'), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await admin`select 1`;
  } catch (error) {
    throw new Error(`integration tests need Postgres at ${databaseUrl('postgres')}: ${(error as Error).message}`, { cause: error });
  }
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000 });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(`integration tests need Redis at ${redisUrl}: ${(error as Error).message}`, { cause: error });
  } finally {
    redis.disconnect();
  }
  try {
    await runMigrations(databaseUrl(template));
  } finally {
    await admin.end({ timeout: 5 });
  }
  project.provide('templateDb', template);
  return async () => {
    const cleaner = postgres(databaseUrl('postgres'), { max: 1, onnotice: () => {} });
    try {
      await cleaner.unsafe(`drop database if exists "${template}" with (force)`);
    } finally {
      await cleaner.end({ timeout: 5 });
      await services.stop();
    }
  };
}
