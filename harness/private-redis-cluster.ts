import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { Redis } from 'ioredis';

import { onExit } from './exit-cleanup.js';
import { freePort } from './free-port.js';
import { READY_TIMEOUT_MS } from './private-redis.js';
import { waitFor } from './wait-for.js';

/**
 * A private Redis Cluster from the local `redis-server`: three masters with one replica each
 * (six processes on free ports, bus ports chosen apart so `port + 10000` never matters), in a
 * temp dir, created with `redis-cli --cluster create`. Light enough for a 2-core machine: no
 * persistence, diskless replication. Everything is killed and removed on `close()` and, as a
 * last resort, when this process exits.
 */

const REDIS_BIN = process.env['REDIS_SERVER_BIN'] ?? 'redis-server';
const REDIS_CLI = process.env['REDIS_CLI_BIN'] ?? 'redis-cli';
const MASTERS = 3;
const NODE_TIMEOUT_MS = 2_000;
const HOST = '127.0.0.1';

interface ClusterNodeProcess {
  port: number;
  child: ChildProcess | null;
}

export interface SlotOwner {
  master: number;
  replicas: number[];
}

export interface PrivateRedisCluster {
  /** `redis+cluster://` URL listing the three original masters as seeds */
  url: string;
  ports: number[];
  /** the master (and its replicas) serving the slot of `key`, as the live nodes see it now */
  ownerOf(key: string): Promise<SlotOwner>;
  /** `CLUSTER FAILOVER` on a replica of `key`'s master; resolves once that replica serves the slot everywhere */
  failover(key: string): Promise<SlotOwner>;
  /** SIGKILL of `key`'s master; resolves once a replica was elected and serves the slot everywhere */
  killMaster(key: string): Promise<SlotOwner>;
  close(): Promise<void>;
}

function client(port: number): Redis {
  const redis = new Redis({
    host: HOST,
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
  redis.on('error', () => undefined);
  return redis;
}

async function withNode<T>(port: number, run: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = client(port);
  try {
    await redis.connect();
    return await run(redis);
  } finally {
    redis.disconnect();
  }
}

function runCli(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(REDIS_CLI, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`redis-cli ${args.join(' ')} exited with ${code}:\n${output}`)),
    );
  });
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

type SlotsReply = Array<[number, number, ...Array<[string, number, ...unknown[]]>]>;

/** The node answering for `slot` in one node's own view of the cluster (CLUSTER SLOTS). */
function ownerInView(view: SlotsReply, slot: number): SlotOwner | null {
  const range = view.find(([start, end]) => slot >= start && slot <= end);
  if (!range) return null;
  const [, , master, ...replicas] = range;
  if (!master) return null;
  return { master: Number(master[1]), replicas: replicas.map((r) => Number(r[1])) };
}

export async function startPrivateRedisCluster(): Promise<PrivateRedisCluster> {
  const dir = mkdtempSync(path.join(tmpdir(), 'compactd-redis-cluster-'));
  const allPorts = await distinctFreePorts(MASTERS * 4);
  const nodes: ClusterNodeProcess[] = allPorts.slice(0, MASTERS * 2).map((port) => ({ port, child: null }));
  const busPorts = allPorts.slice(MASTERS * 2);
  const unregister = onExit(() => {
    for (const node of nodes) node.child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  nodes.forEach((node, index) => {
    const nodeDir = path.join(dir, String(node.port));
    mkdirSync(nodeDir);
    // prettier-ignore
    const args = [
      '--port', String(node.port), '--bind', HOST, '--dir', nodeDir, '--logfile', path.join(nodeDir, 'redis.log'),
      '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction',
      '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-port', String(busPorts[index]),
      '--cluster-node-timeout', String(NODE_TIMEOUT_MS),
      // a replica may take over however long its link was down (the test kills masters on purpose)
      '--cluster-replica-validity-factor', '0',
      '--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0',
    ];
    const child = spawn(REDIS_BIN, args, { stdio: 'ignore' });
    node.child = child;
    child.once('exit', () => {
      if (node.child === child) node.child = null;
    });
  });

  const live = () => nodes.filter((node) => node.child !== null).map((node) => node.port);
  const close = async () => {
    const exits = nodes.map((node) =>
      node.child ? new Promise<void>((resolve) => node.child?.once('exit', () => resolve())) : Promise.resolve(),
    );
    for (const node of nodes) node.child?.kill('SIGKILL');
    await Promise.all(exits);
    unregister();
    rmSync(dir, { recursive: true, force: true });
  };

  const views = () => Promise.all(live().map((port) => withNode(port, (redis) => redis.call('CLUSTER', 'SLOTS') as Promise<SlotsReply>)));
  const keySlot = (key: string) => withNode(live()[0] ?? 0, async (redis) => Number(await redis.call('CLUSTER', 'KEYSLOT', key)));

  /** Every live node says the cluster is ok and agrees on who serves `slot`, with replicas in sync. */
  async function settled(slot: number): Promise<SlotOwner | null> {
    for (const port of live()) {
      const info = await withNode(port, (redis) => redis.call('CLUSTER', 'INFO') as Promise<string>);
      if (!info.includes('cluster_state:ok')) return null;
    }
    const owners = (await views()).map((view) => ownerInView(view, slot));
    const first = owners[0];
    if (!first || owners.some((o) => o?.master !== first.master || o.replicas.length !== first.replicas.length)) return null;
    if (!live().includes(first.master)) return null;
    for (const replica of first.replicas) {
      const replication = await withNode(replica, (redis) => redis.info('replication'));
      if (!replication.includes('master_link_status:up')) return null;
    }
    return first;
  }

  async function waitSettled(slot: number, what: string, accept: (owner: SlotOwner) => boolean = () => true): Promise<SlotOwner> {
    const seen: { owner: SlotOwner | null } = { owner: null };
    await waitFor(
      async () => {
        seen.owner = await settled(slot);
        return seen.owner !== null && accept(seen.owner);
      },
      60_000,
      50,
      what,
    );
    if (!seen.owner) throw new Error(`${what}: no owner of slot ${slot}`);
    return seen.owner;
  }

  try {
    await waitFor(
      async () => {
        for (const node of nodes) await withNode(node.port, (redis) => redis.ping());
        return true;
      },
      READY_TIMEOUT_MS,
      50,
      'redis cluster nodes',
    );
    await runCli(['--cluster', 'create', ...nodes.map((n) => `${HOST}:${n.port}`), '--cluster-replicas', '1', '--cluster-yes']);
    // every slot covered, every replica attached: a failover is possible from the start
    for (const slot of [0, 8192, 16383]) await waitSettled(slot, 'redis cluster', (owner) => owner.replicas.length === 1);
  } catch (error) {
    await close();
    throw error;
  }

  const ownerOf = async (key: string) => waitSettled(await keySlot(key), `owner of ${key}`);

  return {
    url: `redis+cluster://${nodes
      .slice(0, MASTERS)
      .map((n) => `${HOST}:${n.port}`)
      .join(',')}`,
    ports: nodes.map((n) => n.port),
    ownerOf,
    async failover(key) {
      const slot = await keySlot(key);
      const before = await waitSettled(slot, `owner of ${key}`, (owner) => owner.replicas.length > 0);
      const promoted = before.replicas[0] ?? 0;
      await withNode(promoted, (redis) => redis.call('CLUSTER', 'FAILOVER'));
      return waitSettled(slot, `failover of ${key} to ${promoted}`, (owner) => owner.master === promoted);
    },
    async killMaster(key) {
      const slot = await keySlot(key);
      const before = await waitSettled(slot, `owner of ${key}`, (owner) => owner.replicas.length > 0);
      const victim = nodes.find((n) => n.port === before.master);
      const exited = new Promise<void>((resolve) => victim?.child?.once('exit', () => resolve()));
      victim?.child?.kill('SIGKILL');
      await exited;
      return waitSettled(slot, `election after killing ${before.master}`, (owner) => before.replicas.includes(owner.master));
    },
    close,
  };
}
