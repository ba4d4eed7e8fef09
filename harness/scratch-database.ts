import { randomUUID } from 'node:crypto';

import postgres from 'postgres';

import { createDb, type DbHandle } from '../src/db/client.js';
import { runMigrations } from '../src/db/migrate.js';
import { databaseUrlIn } from './service-urls.js';

/** A database of one test file, bench run or eval run on a running server, dropped when done. */
export interface ScratchDatabase extends DbHandle {
  url: string;
  name: string;
  /** closes the pool and drops the database */
  drop(): Promise<void>;
}

export interface ScratchDatabaseOptions {
  /** any database URL of the server (its database name is replaced) */
  serverUrl: string;
  /** the new database's name starts with it (a crashed run's leftovers are recognizable) */
  namePrefix: string;
  /** clone this migrated database (CREATE DATABASE … TEMPLATE: much faster than migrating); else create an empty one and migrate it */
  template?: string;
  /** leave the empty database unmigrated (the service under test migrates it on start) */
  migrate?: boolean;
  /** pool size of the handle's own connections (default 10) */
  max?: number;
  /** the pool's application_name in pg_stat_activity */
  applicationName?: string;
}

export async function createScratchDatabase(options: ScratchDatabaseOptions): Promise<ScratchDatabase> {
  const name = `${options.namePrefix}${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const url = databaseUrlIn(options.serverUrl, name);
  await withAdmin(options.serverUrl, async (admin) => {
    if (options.template === undefined) return void (await admin.unsafe(`create database "${name}"`));
    // CREATE DATABASE … TEMPLATE fails while another session touches the template (55006);
    // parallel test files may collide for a moment, so try a few times.
    for (let attempt = 1; ; attempt++) {
      try {
        return void (await admin.unsafe(`create database "${name}" template "${options.template}"`));
      } catch (error) {
        if ((error as { code?: string }).code !== '55006' || attempt >= 20) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  });
  if (options.template === undefined && options.migrate !== false) await runMigrations(url);
  const handle = createDb(url, { max: options.max ?? 10, name: options.applicationName ?? 'compactd-harness' });
  return {
    ...handle,
    url,
    name,
    drop: async () => {
      await handle.close();
      await dropDatabase(options.serverUrl, name);
    },
  };
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await withAdmin(serverUrl, (admin) => admin.unsafe(`drop database if exists "${name}" with (force)`));
}

async function withAdmin<T>(serverUrl: string, use: (admin: postgres.Sql) => Promise<T>): Promise<T> {
  const admin = postgres(databaseUrlIn(serverUrl, 'postgres'), { max: 1, onnotice: () => {} });
  try {
    return await use(admin);
  } finally {
    await admin.end({ timeout: 5 });
  }
}
