import { describe, expect, it } from 'vitest';

import type { CliIo } from '../../../../src/app/cli/common.js';
import { runMcp } from '../../../../src/app/cli/mcp.js';

function io() {
  const out = { stdout: '', stderr: '' };
  const cli: CliIo = {
    stdout: { write: (s: string) => (out.stdout += s) },
    stderr: { write: (s: string) => (out.stderr += s) },
    env: {},
  };
  return { cli, out };
}

describe('compactd mcp command line', () => {
  it.each([
    [[], 'give --conversation ID or --tenant'],
    [['--conversation', 'c1', '--tenant'], 'give --conversation ID or --tenant'],
    [['--tenant', '--host', '0.0.0.0'], '--host needs --http'],
    [['--tenant', '--http', 'eighty'], '--http: invalid value "eighty"'],
    [['--tenant', '--http', '70000'], '--http: invalid value "70000"'],
  ])('%j is a usage error (exit 2) naming the problem', async (args, message) => {
    const { cli, out } = io();
    expect(await runMcp(args, cli)).toBe(2);
    expect(out.stderr).toContain(message);
    expect(out.stderr).toContain('usage: compactd mcp');
  });

  it('--help prints the usage on stdout', async () => {
    const { cli, out } = io();
    expect(await runMcp(['--help'], cli)).toBe(0);
    expect(out.stdout).toContain('--conversation ID');
  });
});
