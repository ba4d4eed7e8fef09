import { describe, expect, it } from 'vitest';

import { renderRecall } from '../../../../src/app/cli/recall-text.js';

const hit = {
  seq: 12,
  role: 'user' as const,
  batchId: '6f1c2a60-0d0b-4a51-9d0e-7d0e0f3c1a11',
  jobId: '1d5bd2d4-6a8e-4b51-8f0e-6c9a9b1b2c33',
  rank: 1.2,
  snippet: '** (CompileError) lib/a.ex:42',
  tool: 'Bash',
  match: 'fragment' as const,
  lines: [
    { line: 1, text: 'Compiling 3 files (.ex)', match: false },
    { line: 2, text: '** (CompileError) lib/a.ex:42: undefined function f/2', match: true },
  ],
};

describe('renderRecall', () => {
  it('names seq, role, tool, batch and how it matched, then the numbered lines, matches marked', () => {
    expect(
      renderRecall('lib/a.ex:42', {
        hits: [hit, { ...hit, seq: 3, role: 'assistant', tool: null, batchId: null, match: 'words', lines: [] }],
      }),
    ).toBe(
      [
        '2 archived messages match "lib/a.ex:42", best first:',
        '',
        'seq 12 · user · tool Bash · batch 6f1c2a60-0d0b-4a51-9d0e-7d0e0f3c1a11 · exact fragment',
        '    1: Compiling 3 files (.ex)',
        '  > 2: ** (CompileError) lib/a.ex:42: undefined function f/2',
        '',
        'seq 3 · assistant · tool - · batch - · words',
        '    ** (CompileError) lib/a.ex:42',
      ].join('\n'),
    );
  });

  it('says when nothing matches', () => {
    expect(renderRecall('zzz', { hits: [] })).toBe('No archived message matches "zzz".');
  });
});
