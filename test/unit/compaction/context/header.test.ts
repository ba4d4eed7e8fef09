import { describe, expect, it } from 'vitest';

import { buildChunkHeader } from '../../../../src/compaction/context/header.js';
import { conversation, countTokens, filler, makeBatch } from '../../../fixtures/builders.js';

describe('buildChunkHeader (SPEC §5.4: the short header every chunk request of a job shares)', () => {
  it('is null when there is no user request and no task state', () => {
    expect(buildChunkHeader(conversation().assistant('hi').build(), [], countTokens)).toBeNull();
  });

  it("names the user's latest typed request, not a tool result or a command output", () => {
    const messages = conversation()
      .user('first ask')
      .user('Now port the parser to Rust')
      .exchange('t', 'Bash', { command: 'ls' }, 'files')
      .user('<returncode>0</returncode><output>ok</output>')
      .build();
    const header = buildChunkHeader(messages, [], countTokens) ?? '';
    expect(header).toContain('Now port the parser to Rust');
    expect(header).not.toContain('first ask');
    expect(header).not.toContain('returncode');
  });

  it('carries the TASK STATE of the newest live batch, never whole summaries, and stays a few hundred tokens', () => {
    const older = makeBatch('a', [1, 2], '## TASK STATE\n- old state\n## FILES\n- /a.ts');
    const newer = makeBatch('b', [30, 31], `## TASK STATE\n- porting the lexer\n${filler(2_000, 'state')}\n## FILES\n- /secret/path.ts`);
    const header = buildChunkHeader(conversation().user(filler(3_000, 'ask')).build(), [newer, older], countTokens) ?? '';
    expect(header).toContain('porting the lexer');
    expect(header).not.toContain('old state');
    expect(header).not.toContain('/secret/path.ts');
    expect(countTokens(header)).toBeLessThan(400);
  });
});
