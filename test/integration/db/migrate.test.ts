import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';

import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';

import { databaseUrl, TEST_DB_PREFIX } from '../../../harness/service-urls.js';
import { runMigrations } from '../../../src/db/migrate.js';

const name = `${TEST_DB_PREFIX}mig_${randomUUID().slice(0, 8)}`;
const url = databaseUrl(name);

afterAll(async () => {
  const admin = postgres(databaseUrl('postgres'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
});

function migrateInChild(): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/compactd.mjs', 'migrate'], { env: { ...process.env, DATABASE_URL: url }, stdio: 'ignore' });
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

describe('migrations', () => {
  it('creates the database, is safe when processes start together, and is idempotent', async () => {
    const codes = await Promise.all([migrateInChild(), migrateInChild(), migrateInChild()]);
    expect(codes).toEqual([0, 0, 0]);
    await runMigrations(url);
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const tables = await sql<{ tablename: string }[]>`select tablename from pg_tables where schemaname = 'public' order by 1`;
      expect(tables.map((t) => t.tablename)).toEqual(
        expect.arrayContaining([
          'tenants',
          'api_keys',
          'conversations',
          'messages',
          'archived_messages',
          'batches',
          'compaction_jobs',
          'compaction_chunks',
        ]),
      );
      const applied = await sql<{ n: number }[]>`select count(*)::int as n from drizzle.__drizzle_migrations`;
      const journal = (await import('../../../migrations/meta/_journal.json', { with: { type: 'json' } })).default;
      expect(applied[0]?.n).toBe(journal.entries.length);
    } finally {
      await sql.end();
    }
  });
});
