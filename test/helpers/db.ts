import { randomUUID } from 'node:crypto';

import postgres from 'postgres';
import { inject } from 'vitest';

import { createDb, type DbHandle } from '../../src/db/client.js';
import { databaseUrl, TEST_DB_PREFIX } from './services.js';

export interface TestDatabase extends DbHandle {
  url: string;
  name: string;
  /** closes the pool and drops the database */
  drop(): Promise<void>;
}

/** A fresh database per test file, cloned from the migrated template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `${TEST_DB_PREFIX}${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const admin = postgres(databaseUrl('postgres'), { max: 1, onnotice: () => {} });
  try {
    // CREATE DATABASE … TEMPLATE fails while another session touches the template
    // (55006); parallel test files may collide for a moment, so try a few times.
    for (let attempt = 1; ; attempt++) {
      try {
        await admin.unsafe(`create database "${name}" template "${inject('templateDb')}"`);
        break;
      } catch (error) {
        if ((error as { code?: string }).code !== '55006' || attempt >= 20) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = databaseUrl(name);
  const handle = createDb(url, { max: 10, name: 'compactd-test' });
  return {
    ...handle,
    url,
    name,
    drop: async () => {
      await handle.close();
      const cleaner = postgres(databaseUrl('postgres'), { max: 1, onnotice: () => {} });
      try {
        await cleaner.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await cleaner.end({ timeout: 5 });
      }
    },
  };
}
