import { getTableColumns, type Query, type SQL, type Table } from 'drizzle-orm';
import { PgDialect, type PreparedQueryConfig } from 'drizzle-orm/pg-core';

import type { DbOrTx } from './client.js';

/**
 * A query of the request path built once per database handle (`build` returns drizzle's
 * `.prepare()` of it, with `sql.placeholder` for its values) instead of on every call: drizzle
 * spends several hundred µs of CPU building a select of a wide table, about five times what
 * running the prepared one costs. A transaction is a handle of its own and builds its own.
 */
export function preparedPerHandle<Query>(build: (db: DbOrTx) => Query): (db: DbOrTx) => Query {
  const built = new WeakMap<DbOrTx, Query>();
  return (db) => {
    let query = built.get(db);
    if (query === undefined) {
      query = build(db);
      built.set(db, query);
    }
    return query;
  };
}

/** Compiles raw SQL exactly as the pool's drizzle instance does (no casing or other options are set there). */
const dialect = new PgDialect();

/**
 * Runs raw SQL as a prepared statement of its connection. drizzle runs `execute` unnamed, and
 * postgres.js sends an unnamed statement with parameters in two round trips (it describes the
 * statement first, to learn its parameter types); a prepared one is described once per
 * connection and then costs one. For statements of the request path with a fixed text: each
 * distinct text is kept by every connection that ran it, so text built from the data (a list
 * of a varying number of parameters, identifiers) does not belong here.
 */
export function executePrepared<Row extends Record<string, unknown>>(db: DbOrTx, query: SQL): Promise<Row[]> {
  return runPrepared<Row>(db, dialect.sqlToQuery(query), {});
}

function runPrepared<Row>(db: DbOrTx, compiled: Query, values: Record<string, unknown>): Promise<Row[]> {
  // drizzle names only the statements it prepares; the name itself is not sent (postgres.js keys by the text)
  return db._.session.prepareQuery<PreparedQueryConfig & { execute: Row[] }>(compiled, undefined, 'raw', false).execute(values);
}

/**
 * `executePrepared` for a statement compiled once, at load: its values are `sql.placeholder`s,
 * given per run. Compiling a statement (drizzle's `sqlToQuery`) costs the request path more
 * CPU than running it, so a statement run on every append is built only once.
 */
export function compiledStatement<Row extends Record<string, unknown>, Values extends Record<string, unknown>>(query: SQL) {
  const compiled = dialect.sqlToQuery(query);
  return (db: DbOrTx, values: Values): Promise<Row[]> => runPrepared<Row>(db, compiled, values);
}

/**
 * Maps a raw row of `table` (`returning *`: database column names, driver values) to the
 * object drizzle's own queries return for it: property names and each column's own decoding.
 */
export function tableRowMapper<T extends Table>(table: T): (raw: Record<string, unknown>) => T['$inferSelect'] {
  const columns = Object.entries(getTableColumns(table));
  return (raw) => {
    const row: Record<string, unknown> = {};
    for (const [key, column] of columns) {
      const value = raw[column.name];
      row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
    }
    return row;
  };
}
