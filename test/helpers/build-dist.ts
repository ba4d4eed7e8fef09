import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Once per test run, before any project: compile src/ to dist/ (`npm run build`, incremental,
 * a few seconds when nothing changed). Test files import the sources, but every child
 * process a test starts through `bin/compactd.mjs` runs the compiled JavaScript, as `npm
 * start` and the image do, so it must be current.
 */
export default async function buildDist(): Promise<void> {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: repoRoot });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm run build failed; the tests run the compiled CLI:\n${stdout}${stderr}`, { cause: error });
  }
}
