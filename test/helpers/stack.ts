import type { Logger } from 'pino';

import { type InProcessStack, startInProcessStack } from '../../harness/in-process-stack.js';
import { TEST_REDIS_URL } from '../../harness/service-urls.js';
import type { WorkerDeps } from '../../src/worker/deps.js';
import { createTestDatabase } from './db.js';

export type Stack = InProcessStack;

/**
 * The whole service in-process (harness/in-process-stack.ts) over a database cloned from the
 * run's migrated template and a queue prefix of its own, so parallel test files never share
 * either. `workers: false` leaves the work to child processes started by the test.
 */
export async function createStack(
  options: { env?: Record<string, string>; workers?: boolean; workerOverrides?: Partial<WorkerDeps>; logger?: Logger } = {},
): Promise<Stack> {
  return startInProcessStack({ database: await createTestDatabase(), redisUrl: TEST_REDIS_URL, tenantName: 'e2e', ...options });
}
