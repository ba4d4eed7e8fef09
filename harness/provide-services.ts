import { connect } from 'node:net';

import { describePlan, planServices, type ServiceName, type ServiceSource } from './service-plan.js';

/**
 * Finds (or starts) the Postgres and Redis of a test run, per service-plan.ts: probes
 * the local defaults, asks testcontainers for a container runtime only when something is
 * still missing, and starts only the containers needed. The resulting URLs are put in
 * DATABASE_URL / REDIS_URL, which service-urls.ts reads in every test file.
 */

/** true when something accepts a TCP connection there within the timeout */
function answers(port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function containerRuntimeReachable(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

export interface TestServices {
  databaseUrl: string;
  redisUrl: string;
  stop(): Promise<void>;
}

async function startContainer(name: ServiceName): Promise<{ url: string; stop: () => Promise<unknown> }> {
  if (name === 'postgres') {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const started = await new PostgreSqlContainer('postgres:16-alpine').start();
    return { url: started.getConnectionUri(), stop: () => started.stop() };
  }
  const { RedisContainer } = await import('@testcontainers/redis');
  const started = await new RedisContainer('redis:7-alpine').start();
  return { url: started.getConnectionUrl(), stop: () => started.stop() };
}

/** set once the services of this run are chosen, so a second project's setup reuses them without a second line */
const CHOSEN = 'COMPACTD_TEST_SERVICES_CHOSEN';

export async function provideTestServices(env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<TestServices> {
  if (env[CHOSEN] && env['DATABASE_URL'] && env['REDIS_URL'])
    return { databaseUrl: env['DATABASE_URL'], redisUrl: env['REDIS_URL'], stop: async () => {} };
  const given = { DATABASE_URL: env['DATABASE_URL'], REDIS_URL: env['REDIS_URL'] };
  const localAnswers = {
    postgres: given.DATABASE_URL ? false : await answers(5432),
    redis: given.REDIS_URL ? false : await answers(6379),
  };
  const missing = (!given.DATABASE_URL && !localAnswers.postgres) || (!given.REDIS_URL && !localAnswers.redis);
  const plan = planServices({ env: given, localAnswers, containerRuntime: missing && (await containerRuntimeReachable()) });
  if (!plan.ok) throw new Error(plan.message);
  log(describePlan(plan));
  const stops: Array<() => Promise<unknown>> = [];
  const urlOf = async (name: ServiceName, source: ServiceSource) => {
    if (source.kind !== 'container') return source.url;
    const started = await startContainer(name);
    stops.push(started.stop);
    return started.url;
  };
  const databaseUrl = await urlOf('postgres', plan.postgres);
  const redisUrl = await urlOf('redis', plan.redis);
  env['DATABASE_URL'] = databaseUrl;
  env['REDIS_URL'] = redisUrl;
  env[CHOSEN] = '1';
  return { databaseUrl, redisUrl, stop: async () => void (await Promise.all(stops.map((stop) => stop()))) };
}
