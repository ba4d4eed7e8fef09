/**
 * SPEC §3. Postgres is the source of truth; Redis only carries the work. One module per area;
 * this one is what the repositories, the migrations (drizzle-kit) and the tests import.
 */
export * from './schema/history.js';
export * from './schema/jobs.js';
export * from './schema/recall.js';
export * from './schema/tenants.js';
export * from './schema/webhooks.js';
