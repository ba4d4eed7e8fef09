import { createHash } from 'node:crypto';

import type { Cluster, Redis } from 'ioredis';

/** What running a script needs of a client (a test may pass a narrower one). */
export type ScriptClient = Pick<Redis | Cluster, 'eval' | 'evalsha'>;

const shas = new Map<string, string>();

/**
 * Runs a Lua script by its SHA (EVALSHA), so its text crosses the wire once per server, not on
 * every call (the slot and rate-limit scripts run several times per chunk step). A server that
 * does not know it yet, or forgot it (a restart, SCRIPT FLUSH), answers NOSCRIPT: the script
 * is then sent whole with EVAL, which also caches it there.
 */
export async function runScript(redis: ScriptClient, script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown> {
  let sha = shas.get(script);
  if (sha === undefined) {
    sha = createHash('sha1').update(script).digest('hex');
    shas.set(script, sha);
  }
  try {
    return await redis.evalsha(sha, numKeys, ...args);
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('NOSCRIPT')) return redis.eval(script, numKeys, ...args);
    throw error;
  }
}
