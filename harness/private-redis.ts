import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { Redis } from 'ioredis';

import { onExit } from './exit-cleanup.js';
import { freePort } from './free-port.js';
import { waitFor } from './wait-for.js';

/**
 * A private `redis-server` on a free port in a temp dir, for suites that kill, restart or
 * flush their Redis; the machine's shared one (6379) is never touched. It is stopped on
 * `close()` and, as a last resort, when this process exits.
 */

const REDIS_BIN = process.env['REDIS_SERVER_BIN'] ?? 'redis-server';
export const READY_TIMEOUT_MS = 30_000;

export interface PrivateRedis {
  url: string;
  port: number;
  dir: string;
  /** stops the server (SHUTDOWN, which writes the AOF when enabled; `hard`: SIGKILL) */
  stop(options?: { hard?: boolean }): Promise<void>;
  start(): Promise<void>;
  restart(options?: { hard?: boolean }): Promise<void>;
  /** FLUSHALL: every key gone while the server keeps running */
  flushAll(): Promise<void>;
  close(): Promise<void>;
}

async function redisAnswers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } finally {
    client.disconnect();
  }
}

/** `redis-server` on a free port; `appendOnly` keeps data across restarts (AOF, fsync every second). */
export async function startPrivateRedis(options: { appendOnly?: boolean } = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'compactd-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    options.appendOnly ? 'yes' : 'no',
    '--appendfsync',
    'everysec',
    '--maxmemory-policy',
    'noeviction',
    '--logfile',
    path.join(dir, 'redis.log'),
  ];
  const start = async () => {
    if (child) return;
    const started = spawn(REDIS_BIN, args, { stdio: 'ignore' });
    child = started;
    started.once('exit', () => {
      if (child === started) child = null;
    });
    await waitFor(() => redisAnswers(url), READY_TIMEOUT_MS, 50, `private redis on ${port}`);
  };
  const stop = async (opts: { hard?: boolean } = {}) => {
    const running = child;
    if (!running) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill(opts.hard ? 'SIGKILL' : 'SIGTERM');
    await exited;
  };
  const unregister = onExit(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  await start();
  return {
    url,
    port,
    dir,
    stop,
    start,
    restart: async (opts) => {
      await stop(opts);
      await start();
    },
    flushAll: async () => {
      const client = new Redis(url, { maxRetriesPerRequest: 1 });
      client.on('error', () => undefined);
      try {
        await client.flushall();
      } finally {
        client.disconnect();
      }
    },
    close: async () => {
      await stop({ hard: true });
      unregister();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
