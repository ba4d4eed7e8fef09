import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

/**
 * The formatter and the linter are part of the tests (STYLE §11): `npm test`
 * fails when a file is not formatted as prettier would write it, or when eslint reports a
 * problem. The fix for either is `npm run format`.
 */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const resolveBin = (pkg: string, bin: string) =>
  path.join(path.dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`)), bin);
const run = promisify(execFile);

async function outcome(bin: string, args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, output: `${stdout}${stderr}` };
  } catch (error) {
    const { code = 1, stdout = '', stderr = '' } = error as { code?: number; stdout?: string; stderr?: string };
    return { code, output: `${stdout}${stderr}` };
  }
}

describe('formatting and lint', () => {
  it('every file is formatted by prettier', { timeout: 240_000 }, async () => {
    const result = await outcome(resolveBin('prettier', 'bin/prettier.cjs'), ['--check', '--log-level', 'warn', '.']);
    expect(result.output.trim(), 'run `npm run format`').toBe('');
    expect(result.code).toBe(0);
  });

  it('eslint reports nothing', { timeout: 300_000 }, async () => {
    const result = await outcome(resolveBin('eslint', 'bin/eslint.js'), ['--max-warnings', '0', '.']);
    expect(result.output.trim(), 'run `npm run format`, then fix what is left by hand').toBe('');
    expect(result.code).toBe(0);
  });
});
