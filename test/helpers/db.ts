import { inject } from 'vitest';

import { createScratchDatabase, type ScratchDatabase } from '../../harness/scratch-database.js';
import { TEST_DATABASE_URL, TEST_DB_PREFIX } from '../../harness/service-urls.js';

export type TestDatabase = ScratchDatabase;

/** A fresh database per test file, cloned from the run's migrated template (global-setup.ts). */
export function createTestDatabase(): Promise<TestDatabase> {
  return createScratchDatabase({
    serverUrl: TEST_DATABASE_URL,
    namePrefix: TEST_DB_PREFIX,
    template: inject('templateDb'),
    applicationName: 'compactd-test',
  });
}
