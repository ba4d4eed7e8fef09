import { describe, expect, it } from 'vitest';

import { parseCliArgs } from '../../../eval/cli.js';

describe('parseCliArgs', () => {
  it.each([
    [[], { quick: false, sim: true, outDir: null, dataDir: null }],
    [['--quick'], { quick: true, sim: false, outDir: null, dataDir: null }],
    [['--no-sim', '--out-dir', '/tmp/x', '--data', '/d'], { quick: false, sim: false, outDir: '/tmp/x', dataDir: '/d' }],
  ])('%j', (argv, expected) => {
    expect(parseCliArgs(argv)).toEqual(expected);
  });

  it('answers help, and rejects an unknown option by name', () => {
    expect(parseCliArgs(['-h'])).toBe('help');
    expect(() => parseCliArgs(['--bogus'])).toThrow(/--bogus/);
  });
});
