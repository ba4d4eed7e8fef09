import { spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import postgres from 'postgres';

import { onExit } from './exit-cleanup.js';
import { freePort } from './free-port.js';
import { waitFor } from './wait-for.js';

/**
 * A private Postgres cluster on a free port in a temp dir, for suites that kill, restart or
 * fail over their database; the machine's shared one (5432) is never touched. It is stopped
 * on `close()` and, as a last resort, when this process exits.
 */

const PG_BIN = process.env['PG_BIN'] ?? '/usr/lib/postgresql/15/bin';
const READY_TIMEOUT_MS = 30_000;

export interface PrivatePostgres {
  port: number;
  dataDir: string;
  /** URL of a database on this cluster (default `postgres`) */
  url(database?: string): string;
  /** `fast` disconnects clients and shuts down cleanly; `immediate` is a crash (recovery on start) */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  close(): Promise<void>;
}

/** initdb refuses to run as root: run the cluster's commands as the `postgres` user then. */
function asClusterOwner(command: string, args: string[]): [string, string[]] {
  if (process.getuid?.() === 0) return ['runuser', ['-u', 'postgres', '--', command, ...args]];
  return [command, args];
}

function run(command: string, args: string[], what: string): Promise<void> {
  const [bin, argv] = asClusterOwner(command, args);
  return new Promise((resolve, reject) => {
    const child = spawn(bin, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${what} exited with ${code}: ${output.trim()}`))));
  });
}

/** A fresh Postgres 15 cluster (initdb into a temp dir, trust auth) listening on 127.0.0.1:<free port>. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const port = await freePort();
  const root = mkdtempSync(path.join(tmpdir(), 'compactd-pg-'));
  const dataDir = path.join(root, 'data');
  if (process.getuid?.() === 0) {
    const owner = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const group = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    if (owner.status !== 0) throw new Error('running as root needs a `postgres` user to own the private cluster');
    chownSync(root, Number(owner.stdout.trim()), Number(group.stdout.trim()));
  }
  await run(path.join(PG_BIN, 'initdb'), ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8'], 'initdb');
  const serverOptions = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c max_connections=300`;
  const pgCtl = (args: string[], what: string) => run(path.join(PG_BIN, 'pg_ctl'), ['-D', dataDir, ...args], what);
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const start = async () => {
    await pgCtl(['-o', serverOptions, '-l', path.join(root, 'postgres.log'), '-w', '-t', '60', 'start'], 'pg_ctl start');
    await waitFor(
      async () => {
        const sql = postgres(url(), { max: 1, connect_timeout: 2, onnotice: () => {} });
        try {
          await sql`select 1`;
          return true;
        } finally {
          await sql.end({ timeout: 1 });
        }
      },
      READY_TIMEOUT_MS,
      50,
      `private postgres on ${port}`,
    );
  };
  const stop = (mode: 'fast' | 'immediate' = 'fast') => pgCtl(['-m', mode, '-w', '-t', '60', 'stop'], 'pg_ctl stop');
  const unregister = onExit(() => {
    const [bin, argv] = asClusterOwner(path.join(PG_BIN, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', 'stop']);
    spawnSync(bin, argv, { stdio: 'ignore' });
    rmSync(root, { recursive: true, force: true });
  });
  await start();
  return {
    port,
    dataDir,
    url,
    stop,
    start,
    restart: async (mode = 'fast') => {
      await stop(mode);
      await start();
    },
    close: async () => {
      await stop('immediate').catch(() => undefined);
      unregister();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
