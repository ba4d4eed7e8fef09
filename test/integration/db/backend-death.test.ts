import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { databaseUrl } from '../../../harness/service-urls.js';

const CHILD = fileURLToPath(new URL('./backend-death-child.ts', import.meta.url));
const TYPES_CHILD = fileURLToPath(new URL('./types-fetch-death-child.ts', import.meta.url));

interface ChildRun {
  exit: number | string;
  steps: Record<string, string>;
  stderr: string;
}

function runChild(file: string, args: string[]): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      const lines = stdout.split('\n').filter((line) => line.startsWith('{'));
      const steps = Object.fromEntries(
        lines.map((line) => JSON.parse(line) as { step: string; result: string }).map((s) => [s.step, s.result]),
      );
      resolve({ exit: code ?? signal ?? 'unknown', steps, stderr });
    });
  });
}

// The server ending a session under a running query is what a Postgres restart does to every
// pooled connection. postgres.js 3.4.9 then threw from its own setImmediate (ending the process)
// and failed the next query with the dead session's error; patches/postgres+3.4.9.patch, applied
// by the postinstall step, fixes both. The probe runs in a child process so that a crash shows
// as its exit code rather than as this runner's unhandled error.
describe('the Postgres driver when the server ends a session mid-query', () => {
  it('rejects the callers of the dead session, keeps the process alive and serves the next query', async () => {
    const run = await runChild(CHILD, [databaseUrl('postgres')]);
    expect(run.stderr).not.toMatch(/TypeError|Cannot read properties/);
    expect(run.steps).toEqual({
      plainQuery: 'rejected CONNECTION_CLOSED',
      nextQuery: 'ok',
      transaction: 'rejected CONNECTION_CLOSED',
      afterwards: 'ok',
    });
    expect(run.exit).toBe(0);
  }, 60_000);
});

// A connection lost right after its session started, while postgres.js fetches the array types
// (what every pooled connection does when Postgres restarts and they all reconnect): 3.4.9 left
// that query's promise without a handler, and the process ended on an unhandled rejection with
// no caller of ours on the stack. The patch settles it; the query that opened the connection
// fails, and the next one runs.
describe('the Postgres driver when a new connection dies while it reads the array types', () => {
  it('keeps the process alive and serves the next query', async () => {
    const url = new URL(databaseUrl('postgres'));
    const run = await runChild(TYPES_CHILD, [url.hostname, url.port || '5432', url.pathname.slice(1)]);
    expect(run.steps['unhandled']).toBeUndefined();
    expect(run.steps['opening']).toMatch(/^rejected /);
    expect(run.steps['afterwards']).toBe('ok');
    expect(run.exit).toBe(0);
  }, 60_000);
});
