import { fileURLToPath } from 'node:url';

import { defineConfig } from 'vitest/config';

// Three tiers (STYLE §9): unit needs no services; integration and e2e talk to the real
// Postgres and Redis named by DATABASE_URL / REDIS_URL (defaults: the local services), found
// and started through harness/. The e2e tier's files sit in test/e2e/pipeline, suites and
// clients (docs/testing.md); its glob takes them all, each once.
// The package's own entries (compactd/client, …) resolve to their sources in every project,
// as in tsconfig.json's paths; the published exports point at the compiled dist/.
const source = (file: string): string => fileURLToPath(new URL(file, import.meta.url));
const resolve = {
  alias: [
    { find: /^compactd\/(langchain|ai-sdk)$/, replacement: source('./src/integrations/$1/index.ts') },
    { find: /^compactd\/([\w-]+)$/, replacement: source('./src/$1/index.ts') },
  ],
};

export default defineConfig({
  test: {
    // The root project's global setup runs once per run, whatever projects are selected.
    globalSetup: ['test/helpers/build-dist.ts'],
    projects: [
      {
        resolve,
        test: {
          name: 'unit',
          sequence: { groupOrder: 0 },
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 60_000,
        },
      },
      {
        resolve,
        test: {
          name: 'integration',
          sequence: { groupOrder: 1 },
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/helpers/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          pool: 'forks',
          maxWorkers: 2,
        },
      },
      {
        resolve,
        test: {
          name: 'e2e',
          sequence: { groupOrder: 2 },
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/helpers/global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 120_000,
          pool: 'forks',
          maxWorkers: 1,
        },
      },
    ],
  },
});
