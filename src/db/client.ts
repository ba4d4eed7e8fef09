import type { ExtractTablesWithRelations } from 'drizzle-orm';
import type { PgTransaction } from 'drizzle-orm/pg-core';
import { drizzle, type PostgresJsDatabase, type PostgresJsQueryResultHKT } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';

import * as schema from './schema.js';

export type Schema = typeof schema;
export type Db = PostgresJsDatabase<Schema>;
/** Drizzle's transaction type is not exported under a short name (drizzle-orm #2851). */
export type Tx = PgTransaction<PostgresJsQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
export type DbOrTx = Db | Tx;
/** The postgres.js client under the pool, for LISTEN/NOTIFY (callers outside db/ name it by this type). */
export type Sql = postgres.Sql;

export interface DbHandle {
  db: Db;
  sql: Sql;
  close(): Promise<void>;
}

export interface CreateDbOptions {
  max?: number;
  /** application_name, visible in pg_stat_activity */
  name?: string;
  /** statement_timeout of every connection (ms): the API's pool has one, the worker's none */
  statementTimeoutMs?: number;
  /** called with every statement sent (postgres.js `debug`): for tests that count round trips */
  onQuery?: (query: string) => void;
}

/** Opens a pool; `close()` is idempotent and waits up to 5 s for queries in flight. */
export function createDb(url: string, options: CreateDbOptions = {}): DbHandle {
  const sql = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connection: {
      application_name: options.name ?? 'compactd',
      ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    },
    ...(options.onQuery ? { debug: (_connection: number, query: string) => options.onQuery?.(query) } : {}),
  });
  const db = drizzle(sql, { schema });
  let closing: Promise<void> | undefined;
  return {
    db,
    sql,
    close: () => (closing ??= sql.end({ timeout: 5 })),
  };
}
