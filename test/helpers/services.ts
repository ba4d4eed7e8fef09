/** Service URLs for integration and e2e tests (defaults: the machine's local services). */
export const TEST_DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/compactd_test';
export const TEST_REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
export const TEST_DB_PREFIX = 'compactd_t_';

export function databaseUrl(name: string): string {
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}
