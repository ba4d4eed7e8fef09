import { spawnSync } from 'node:child_process';

import { describe, expect, it } from 'vitest';

import { boundHeapGrowth } from '../../../src/app/heap-growth.js';

describe('the worker bounds V8 heap growth', () => {
  it('uses a flag this Node’s V8 knows (an unknown one is a "bad option" at start)', () => {
    const known = spawnSync(process.execPath, ['--heap-growing-percent=50', '-e', ''], { encoding: 'utf8' });
    expect(known.status, known.stderr).toBe(0);
    const unknown = spawnSync(process.execPath, ['--heap-growing-percent-nonexistent=50', '-e', ''], { encoding: 'utf8' });
    expect(unknown.status).not.toBe(0);
  });

  it('cannot be set through NODE_OPTIONS (Node refuses it there), so only the command line is read', () => {
    const refused = spawnSync(process.execPath, ['-e', ''], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '--heap-growing-percent=25' },
    });
    expect(refused.status).not.toBe(0);
  });

  it.each([[['--heap-growing-percent=80']], [['--max-old-space-size=512', '--heap_growing_percent=25']]])(
    'leaves an operator’s own setting alone (argv %j)',
    (execArgv) => {
      expect(boundHeapGrowth(execArgv)).toBe(false);
    },
  );
});
