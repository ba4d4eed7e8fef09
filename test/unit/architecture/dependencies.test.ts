import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('architecture', () => {
  it('respects the dependency rules of STYLE.md §2 (dependency-cruiser)', async () => {
    const result = await run('npx', ['depcruise', 'src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], {
      maxBuffer: 16 * 1024 * 1024,
    }).then(
      (r) => ({ code: 0, output: r.stdout + r.stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
    );
    expect(result.output.replace(/npm warn.*\n/g, '')).not.toMatch(/error /);
    expect(result.code).toBe(0);
  }, 180_000);

  it('type-checks (tsc --noEmit, strict)', async () => {
    const result = await run('npx', ['tsc', '--noEmit', '-p', 'tsconfig.json'], { maxBuffer: 16 * 1024 * 1024 }).then(
      (r) => ({ code: 0, output: r.stdout }),
      (error: { code: number; stdout: string }) => ({ code: error.code, output: error.stdout }),
    );
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
    // a whole-program check: on a busy 2-core machine it takes well over the unit tier's minute
  }, 240_000);
});
