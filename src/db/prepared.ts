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
