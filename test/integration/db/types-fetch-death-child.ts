import net from 'node:net';

import { createDb } from '../../../src/db/client.js';

/**
 * A process for the types-fetch-death test: its pool reaches Postgres through a TCP relay that
 * resets the connection as soon as the driver, right after its session started, asks for the
 * array types (postgres.js does this on every new connection, before the query that opened it),
 * and then refuses connections, as a restarting server does. postgres.js 3.4.9 left that types
 * query's promise without a handler, so its failure was an unhandled rejection (a bare
 * `ECONNRESET` or `connect ECONNREFUSED`) that ended the process. Prints one JSON line per step:
 *   - `opening`: the query whose connection lost its types query;
 *   - `afterwards`: a query once the relay lets connections through again.
 * Args: Postgres host, port, database.
 */
const [host = '127.0.0.1', port = '5432', database = 'postgres'] = process.argv.slice(2);

/** reset at the types query (once), then refuse, then pass everything through */
let mode: 'reset-types' | 'refuse' | 'pass' = 'reset-types';
const relay = net.createServer((client) => {
  if (mode === 'refuse') return client.resetAndDestroy();
  const server = net.connect(Number(port), host);
  client.on('data', (chunk: Buffer) => {
    if (mode === 'reset-types' && chunk.includes("typcategory = 'A'")) {
      mode = 'refuse';
      server.destroy();
      client.resetAndDestroy();
      return;
    }
    server.write(chunk);
  });
  server.on('data', (chunk: Buffer) => client.write(chunk));
  server.on('error', () => client.destroy());
  client.on('error', () => server.destroy());
  server.on('close', () => client.destroy());
});
await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
const relayPort = (relay.address() as net.AddressInfo).port;

const step = (name: string, result: string) => process.stdout.write(`${JSON.stringify({ step: name, result })}\n`);
const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error: { code?: string }) => `rejected ${error.code ?? 'without code'}`,
  );

process.on('unhandledRejection', (reason) => {
  step('unhandled', String((reason as Error)?.message ?? reason));
  process.exit(3);
});

const db = createDb(`postgres://postgres@127.0.0.1:${relayPort}/${database}`, { max: 1, name: 'compactd-types-fetch-death' });
step('opening', await outcome(db.sql`select 1`));
mode = 'pass';
step('afterwards', await outcome(db.sql`select 1`));
await db.close();
relay.close();
