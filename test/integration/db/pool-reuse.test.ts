import { afterEach, describe, expect, it } from 'vitest';

import { databaseUrl } from '../../../harness/service-urls.js';
import { createDb, type DbHandle } from '../../../src/db/client.js';

// postgres.js 3.4.9 hands each query the connection that has been idle the longest: once a
// burst had opened all ten of a pool's connections, every later statement went to a different
// backend in turn. Each then ran on a process idle since its last turn, and Postgres spent
// 3–4× the CPU per statement (the gateway bench scenario after the scale-out one: 13–19 ms of
// Postgres CPU per request against 4–5 alone; perf placed it in the backends' own code and in
// waking them). patches/postgres+3.4.9.patch makes the pool reuse the connection released
// last, as pgbouncer does by default, so a steady load keeps the backends a burst left warm.
describe('a pool after a burst', () => {
  let handle: DbHandle | undefined;
  afterEach(async () => {
    await handle?.close();
  });

  it('sends sequential statements and transactions to the connection used last, not round the pool', async () => {
    handle = createDb(databaseUrl('postgres'), { max: 10 });
    const { sql } = handle;
    // ten statements at once open all ten connections
    const burst = await Promise.all(
      Array.from({ length: 10 }, () => sql<{ pid: number }[]>`select pg_backend_pid() as pid, pg_sleep(0.05)`),
    );
    expect(new Set(burst.map(([row]) => row?.pid)).size).toBe(10);

    const seen = new Set<number | undefined>();
    for (let turn = 0; turn < 20; turn += 1) {
      const [row] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
      seen.add(row?.pid);
      const inTransaction = await sql.begin(async (tx) => {
        const [own] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
        return own?.pid;
      });
      seen.add(inTransaction);
    }
    expect(seen.size).toBe(1);
  });

  it('still spreads statements sent at once over the open connections', async () => {
    handle = createDb(databaseUrl('postgres'), { max: 4 });
    const { sql } = handle;
    await Promise.all(Array.from({ length: 4 }, () => sql`select pg_sleep(0.05)`));
    const together = await Promise.all(
      Array.from({ length: 4 }, () => sql<{ pid: number }[]>`select pg_backend_pid() as pid, pg_sleep(0.05)`),
    );
    expect(new Set(together.map(([row]) => row?.pid)).size).toBe(4);
  });
});
