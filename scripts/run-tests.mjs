#!/usr/bin/env node
// `npm test`: runs the unit, integration and e2e projects in one vitest run and ends with
// the line `N passed, N failed` computed from the runner's JSON results.
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';

const resultsFile = '.vitest-results.json';
await rm(resultsFile, { force: true });

const args = ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${resultsFile}`, ...process.argv.slice(2)];
const child = spawn('npx', args, { stdio: 'inherit' });
const code = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));

let passed = 0;
let failed = 0;
try {
  const results = JSON.parse(await readFile(resultsFile, 'utf8'));
  passed = results.numPassedTests ?? 0;
  failed = (results.numFailedTests ?? 0) + countFilesFailedWithoutFailedTests(results);
} catch (error) {
  console.error(`could not read ${resultsFile}: ${error.message}`);
  failed = Math.max(failed, 1);
}
if (code !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);
process.exit(code);

// A test file that fails to load (syntax error, failed hook) reports no failed tests; count it
// once so the summary line never says 0 failed for a red run. Files whose tests failed are
// already counted through their tests (numFailedTestSuites is not used: it also counts every
// describe block around a failed test).
function countFilesFailedWithoutFailedTests(results) {
  return (results.testResults ?? []).filter(
    (file) => file.status === 'failed' && !(file.assertionResults ?? []).some((t) => t.status === 'failed'),
  ).length;
}
