/**
 * `REDIS_URL` names either one Redis server (`redis://…`, `rediss://…` for TLS) or a Redis
 * Cluster: `redis+cluster://[user[:password]@]host:port,host:port,…` (`rediss+cluster://`
 * for TLS). The cluster's hosts are seeds: the client learns every node and slot from the
 * first one that answers, so listing a few masters is enough. Pure: the queue adapter turns
 * the result into an ioredis client.
 */

export interface RedisNode {
  host: string;
  port: number;
}

export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: RedisNode[]; username: string | undefined; password: string | undefined; tls: boolean };

export type ParsedRedisUrl = { ok: true; target: RedisTarget } | { ok: false; message: string };

const SINGLE_SCHEMES = ['redis:', 'rediss:'];
const CLUSTER_SCHEME = /^(rediss?)\+cluster:\/\/(.*)$/s;
const DEFAULT_PORT = 6379;

export const REDIS_URL_FORMS = 'redis://host:port, rediss://host:port or redis+cluster://host:port,host:port';

export function parseRedisUrl(text: string): ParsedRedisUrl {
  const cluster = CLUSTER_SCHEME.exec(text);
  if (cluster) return parseClusterUrl(cluster[1] === 'rediss', cluster[2] ?? '');
  try {
    if (SINGLE_SCHEMES.includes(new URL(text).protocol)) return { ok: true, target: { kind: 'single', url: text } };
  } catch {
    // not a URL at all: same answer as an unknown scheme
  }
  return { ok: false, message: `must be ${REDIS_URL_FORMS}` };
}

function parseClusterUrl(tls: boolean, rest: string): ParsedRedisUrl {
  // Host lists never hold an '@': the userinfo ends at the last one.
  const at = rest.lastIndexOf('@');
  const userinfo = at >= 0 ? rest.slice(0, at) : undefined;
  const hostList = (at >= 0 ? rest.slice(at + 1) : rest).replace(/\/0?$/, '');
  if (/[/?#]/.test(hostList)) {
    return { ok: false, message: 'a cluster URL has no database, path or query (a Redis Cluster has only database 0)' };
  }
  const nodes: RedisNode[] = [];
  for (const entry of hostList.split(',')) {
    const node = parseNode(entry.trim());
    if (node === null) return { ok: false, message: `not a host:port in the cluster's node list: ${JSON.stringify(entry)}` };
    nodes.push(node);
  }
  let username: string | undefined;
  let password: string | undefined;
  if (userinfo !== undefined) {
    const colon = userinfo.indexOf(':');
    const [user, pass] = colon >= 0 ? [userinfo.slice(0, colon), userinfo.slice(colon + 1)] : [userinfo, undefined];
    try {
      username = user === '' ? undefined : decodeURIComponent(user);
      password = pass === undefined || pass === '' ? undefined : decodeURIComponent(pass);
    } catch {
      return { ok: false, message: 'the user or password is not valid percent-encoding' };
    }
  }
  return { ok: true, target: { kind: 'cluster', nodes, username, password, tls } };
}

const HOST_NAME = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/;

function parseNode(entry: string): RedisNode | null {
  // [v6]:port, v6 in brackets alone, host:port, host
  const bracketed = /^\[([0-9A-Fa-f:.]+)\](?::(\d+))?$/.exec(entry);
  const plain = /^([^:[\]]+)(?::(\d+))?$/.exec(entry);
  const match = bracketed ?? plain;
  if (!match) return null;
  const host = match[1] ?? '';
  if (!bracketed && !HOST_NAME.test(host)) return null;
  const port = match[2] === undefined ? DEFAULT_PORT : Number(match[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return null;
  return { host, port };
}
