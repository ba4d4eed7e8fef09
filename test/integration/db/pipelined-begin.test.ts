import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';

import { databaseUrl } from '../../../harness/service-urls.js';

// Under a storm of requests every pooled connection is busy, so postgres.js pipelines a
// transaction's BEGIN behind other queries. When the pipeline was full (or the socket pushed
// back) 3.4.9 skipped the step that reserves the connection for the transaction, and the BEGIN
// then failed with UNSAFE_TRANSACTION: a 500 for one request in a thousand in the duplicate
// storm. patches/postgres+3.4.9.patch reserves the connection on every path. A pipeline of one
// query makes the full-pipeline path certain here.
describe('a transaction begun while every pooled connection is busy', () => {
  let sql: postgres.Sql | undefined;
  afterEach(async () => {
    await sql?.end({ timeout: 5 });
  });

  it('reserves its connection even when the BEGIN lands behind a full pipeline', async () => {
    // max_pipeline is a driver option its type declarations leave out.
    const options = { max: 2, max_pipeline: 1, onnotice: () => {} } as postgres.Options<Record<string, never>>;
    sql = postgres(databaseUrl('postgres'), options);
    const client = sql;
    await Promise.all([client`select 1`, client`select 1`]);
    // postgres.js sends a query when it is awaited; execute() sends these two now.
    const busy = [client`select pg_sleep(0.05)`.execute(), client`select pg_sleep(0.05)`.execute()];
    const transaction = client.begin(async (tx) => {
      const [row] = await tx<{ n: number }[]>`select 41 + 1 as n`;
      return row?.n;
    });
    const others = [client`select 2 as n`.execute(), client`select 3 as n`.execute()];
    await expect(transaction).resolves.toBe(42);
    await Promise.all([...busy, ...others]);
    const [after] = await client<{ n: number }[]>`select 7 as n`;
    expect(after?.n).toBe(7);
  });
});
