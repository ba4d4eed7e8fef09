import { LOCAL_URLS } from './service-selection.js';

/**
 * Service URLs for integration and e2e tests: the global setup (test-services.ts) puts the
 * ones it chose in DATABASE_URL / REDIS_URL before any test file loads.
 */
export const TEST_DATABASE_URL = process.env['DATABASE_URL'] ?? LOCAL_URLS.postgres;
export const TEST_REDIS_URL = process.env['REDIS_URL'] ?? LOCAL_URLS.redis;
export const TEST_DB_PREFIX = 'compactd_t_';

/** The same server as `base`, another database. */
export function databaseUrlIn(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

export function databaseUrl(name: string): string {
  return databaseUrlIn(TEST_DATABASE_URL, name);
}
