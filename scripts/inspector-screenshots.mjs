#!/usr/bin/env node
// Regenerates the README's screenshots of the inspector (docs/inspector-*.png): runs the
// browser test, which builds a real compacted session through llm-sim and, with
// INSPECTOR_SCREENSHOTS set, photographs each page as it checks it. Needs the local
// Postgres and Redis the tests use, and /usr/bin/chromium.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const docs = fileURLToPath(new URL('../docs/', import.meta.url));
const run = spawnSync('npx', ['vitest', 'run', 'test/e2e/clients/inspector-browser.test.ts'], {
  cwd: repoRoot,
  stdio: 'inherit',
  env: { ...process.env, INSPECTOR_SCREENSHOTS: docs },
});
if (run.status !== 0) {
  process.stderr.write('inspector-screenshots: the browser test failed; the screenshots may be incomplete\n');
  process.exit(run.status ?? 1);
}
process.stdout.write(`inspector-screenshots: docs/inspector-conversations.png, docs/inspector-conversation.png, docs/inspector-job.png\n`);
