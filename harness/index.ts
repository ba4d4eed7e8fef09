/**
 * The one harness that starts compactd for the tests, the bench, the chaos suites and the
 * eval (docs/testing.md "The harness"):
 * - services: the running Postgres and Redis (service-urls.ts; a test run chooses them in
 *   provide-services.ts by service-plan.ts), or private ones on free ports that a suite may
 *   kill, restart or flush (private-postgres.ts, private-redis.ts, private-redis-cluster.ts);
 * - a database of one's own on a running server (scratch-database.ts);
 * - the service in this process (in-process-stack.ts) or as `compactd api|worker|llm-sim`
 *   child processes (compactd-process.ts), an llm-sim in this process (llm-sim.ts);
 * - the shared real transcripts (transcripts.ts), generated image files (images.ts), waitFor, freePort.
 * Nothing here imports from test/, bench/, chaos/ or eval/. Test files import the module
 * they need rather than this index, so a unit test that reads transcripts does not load
 * the whole service.
 */
export { type CompactdProcess, type Role, spawnCompactd, type SpawnCompactdOptions } from './compactd-process.js';
export { onExit } from './exit-cleanup.js';
export { freePort } from './free-port.js';
export { type InProcessStack, type InProcessStackOptions, startInProcessStack } from './in-process-stack.js';
export { startTestLlmSim, type TestLlmSim } from './llm-sim.js';
export { type PrivatePostgres, startPrivatePostgres } from './private-postgres.js';
export { type PrivateRedis, startPrivateRedis } from './private-redis.js';
export { REPO_ROOT } from './repo-root.js';
export { createScratchDatabase, dropDatabase, type ScratchDatabase, type ScratchDatabaseOptions } from './scratch-database.js';
export { databaseUrlIn, runningServiceUrls } from './service-urls.js';
export { waitFor } from './wait-for.js';
