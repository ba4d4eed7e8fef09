import { describe, expect, it } from 'vitest';

import { coverage, explicitInstructions, indexContext, isCovered, keyWords, userRequests, userTexts } from '../../../eval/instructions.js';
import type { EvalMessage } from '../../../eval/metrics.js';
import type { Role } from '../../../src/compaction/types.js';
import { text, toolResult } from '../../fixtures/builders.js';

const msg = (role: Role, value: string, metadata?: Record<string, unknown>): EvalMessage => ({
  role,
  content: [text(value)],
  ...(metadata ? { metadata } : {}),
});

describe('userTexts', () => {
  it('keeps what the user typed and drops meta turns, notices, observations and reminders', () => {
    const messages: EvalMessage[] = [
      msg('user', 'Implement spotter-gqc<system-reminder>ignore me</system-reminder>'),
      msg('user', 'Base directory for this skill: /x', { isMeta: true }),
      msg('user', '<task-notification>\n<task-id>b0be39e</task-id>'),
      msg('user', '[Request interrupted by user for tool use]'),
      msg('user', '<returncode>0</returncode><output>ok</output>'),
      { role: 'user', content: [toolResult('t1', 'please ignore')] },
      msg('assistant', 'Please confirm.'),
    ];
    expect(userTexts(messages)).toEqual([{ messageIndex: 0, text: 'Implement spotter-gqc' }]);
  });
});

describe('explicitInstructions', () => {
  it('takes the sentences with must / never / always / don’t / please, skipping ones too short to check', () => {
    const found = explicitInstructions([
      msg('user', 'The login endpoint returns 500. Never change the public API of src/auth/index.ts. Please continue.'),
      msg('user', "Don't touch the migrations folder, and always run mix format before committing."),
    ]);
    expect(found.map((s) => s.text)).toEqual([
      'Never change the public API of src/auth/index.ts.',
      "Don't touch the migrations folder, and always run mix format before committing.",
    ]);
    expect(found[0]?.identifiers).toEqual(['src/auth/index.ts']);
  });
});

describe('keyWords', () => {
  it('takes the longest non-stopwords, lower case, first appearance breaking ties', () => {
    expect(keyWords('Please always run the formatter before committing changes to the Repository')).toEqual([
      'committing',
      'repository',
      'formatter',
      'changes',
    ]);
  });
});

describe('isCovered', () => {
  const [instruction] = explicitInstructions([
    msg('user', 'Never change the public API of src/auth/index.ts; keep backwards compatibility.'),
  ]);
  if (!instruction) throw new Error('fixture has no instruction');

  it.each([
    ['verbatim', 'USER GUIDANCE\n- Never change the public API of src/auth/index.ts; keep backwards compatibility.', true],
    [
      'paraphrased on one line with the identifier',
      '- user: public API of src/auth/index.ts must not change (backwards compatibility)',
      true,
    ],
    ['paraphrased without the identifier', '- user: the public API must not change (backwards compatibility)', false],
    [
      'identifier present but the words far apart',
      'src/auth/index.ts\npublic\n\nx\ny\nz\nAPI change\nq\nr\nbackwards compatibility',
      false,
    ],
    [
      'words spread over three consecutive lines',
      'src/auth/index.ts\n- keep the public\n- API, no change\n- backwards compatibility',
      true,
    ],
    ['split by a line break, otherwise verbatim', 'Never change the public API of\nsrc/auth/index.ts; keep backwards compatibility.', true],
  ])('%s → %s', (_name, context, expected) => {
    expect(isCovered(instruction, indexContext(context))).toBe(expected);
  });
});

describe('coverage', () => {
  it('counts covered statements and lists the missed ones; null ratio when there is none', () => {
    const statements = userRequests([
      msg('user', 'Implement spotter-gqc'),
      msg('user', 'Rename the module Spotter.Transcripts to Spotter.Sessions'),
    ]);
    const result = coverage(statements, indexContext('- Latest request: Implement spotter-gqc'));
    expect(result).toEqual({ covered: 1, total: 2, ratio: 0.5, missed: ['Rename the module Spotter.Transcripts to Spotter.Sessions'] });
    expect(coverage([], indexContext('x')).ratio).toBeNull();
  });
});
