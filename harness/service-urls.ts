import { LOCAL_URLS } from './service-plan.js';

/**
 * The running Postgres and Redis a run uses: DATABASE_URL / REDIS_URL, else the local
 * defaults. A test run's global setup (provide-services.ts) puts the ones it chose there
 * before any test file loads.
 */
export function runningServiceUrls(env: NodeJS.ProcessEnv = process.env): { databaseUrl: string; redisUrl: string } {
  return { databaseUrl: env['DATABASE_URL'] ?? LOCAL_URLS.postgres, redisUrl: env['REDIS_URL'] ?? LOCAL_URLS.redis };
}

export const TEST_DATABASE_URL = runningServiceUrls().databaseUrl;
export const TEST_REDIS_URL = runningServiceUrls().redisUrl;
/** every database a test creates starts with it */
export const TEST_DB_PREFIX = 'compactd_t_';

/** The same server as `base`, another database. */
export function databaseUrlIn(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A database of the test run's server. */
export function databaseUrl(name: string): string {
  return databaseUrlIn(TEST_DATABASE_URL, name);
}
