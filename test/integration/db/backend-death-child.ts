import { sql } from 'drizzle-orm';
import postgres from 'postgres';

import { createDb } from '../../../src/db/client.js';

/**
 * A process for the backend-death test: it loses its Postgres session mid-query (the server
 * side ends it with pg_terminate_backend, as a restart does) and prints, one JSON line per
 * step, what its callers saw. An exception the driver throws outside any promise ends the
 * process before its last lines. Arg: database URL. Steps:
 *   - `plainQuery`: a query in flight when its session ends;
 *   - `nextQuery`: the pool's next query, which must run on a fresh session and not inherit
 *     the dead one's error (postgres.js 3.4.9 failed it with the old session's 57P01);
 *   - `transaction`: a transaction whose query is in flight; the driver then sends its own
 *     ROLLBACK on the dead connection (3.4.9 crashed the process here, porsager/postgres#1208);
 *   - `afterwards`: the pool's next query after that.
 */
const [url = ''] = process.argv.slice(2);
const APP = `compactd-backend-death-${process.pid}`;
// One connection, so the next query is bound to reuse the connection object whose session died.
const db = createDb(url, { max: 1, name: APP });
const killer = postgres(url, { max: 1, onnotice: () => {} });

const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error: { code?: string }) => `rejected ${error.code ?? 'without code'}`,
  );
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Ends this process's session that is running pg_sleep, once the server shows it running. */
async function terminateSleeper(): Promise<void> {
  for (;;) {
    const ended = await killer`
      select pg_terminate_backend(pid) from pg_stat_activity
      where application_name = ${APP} and state = 'active' and query like '%pg_sleep%'`;
    if (ended.length > 0) return;
    await pause(20);
  }
}

const step = (name: string, result: string) => process.stdout.write(`${JSON.stringify({ step: name, result })}\n`);

const plainQuery = outcome(db.sql`select pg_sleep(10)`);
await terminateSleeper();
step('plainQuery', await plainQuery);
await pause(200);
step('nextQuery', await outcome(db.sql`select 1`));

const transaction = outcome(
  db.db.transaction(async (tx) => {
    await tx.execute(sql`select 1`);
    await tx.execute(sql`select pg_sleep(10)`);
  }),
);
await terminateSleeper();
step('transaction', await transaction);
await pause(200); // every write the dead connection deferred has had its turn
step('afterwards', await outcome(db.db.execute(sql`select 1`)));

await Promise.all([db.close(), killer.end({ timeout: 5 })]);
