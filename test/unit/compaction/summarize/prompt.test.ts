import { describe, expect, it } from 'vitest';

import {
  buildConsolidationRequest,
  buildRepairRequest,
  buildSummarizeRequest,
  DEFAULT_SYSTEM_PROMPT,
  fitToBudget,
  INSTRUCTIONS_OPENER,
  KEEP_DIRECTIVE,
  SECTIONS,
  withoutInstructions,
} from '../../../../src/compaction/summarize/prompt.js';
import { readFence } from '../../../../src/compaction/summarize/request-fence.js';
import { mergePolicy } from '../../../../src/config/policy.js';
import { conversation, countTokens, filler } from '../../../fixtures/builders.js';

const policy = mergePolicy();
const chunk = conversation(10)
  .user('Please fix the login bug in src/auth/login.ts')
  .exchange('t1', 'Read', { file_path: 'src/auth/login.ts' }, 'export function login() {}')
  .assistant('I will patch it.')
  .build();

/** The excerpt: the turns inside the request's fence. */
const excerptOf = (request: ReturnType<typeof buildSummarizeRequest>) =>
  readFence(request.messages.map((m) => m.content).join('\n\n'))?.turns ?? [];

describe('buildSummarizeRequest (seed 003 AC1, SPEC §5.4)', () => {
  it('AC1.1/AC4.4: uses the default system prompt when none is configured', () => {
    expect(buildSummarizeRequest(chunk, null, policy).system).toBe(DEFAULT_SYSTEM_PROMPT);
  });

  it('AC4.3: uses a configured prompt as-is, with no persona added', () => {
    const custom = mergePolicy({ systemPrompt: 'You are Lasa. Summarize like Lasa would.' });
    const request = buildSummarizeRequest(chunk, null, custom);
    expect(request.system).toBe('You are Lasa. Summarize like Lasa would.');
    expect(JSON.stringify(request.messages)).not.toContain('Lasa');
  });

  it('puts the optional header inside the fence as its context section, never in a system message', () => {
    const request = buildSummarizeRequest(chunk, "The user's latest request:\nship it", policy);
    expect(request.messages.every((m) => m.role === 'user')).toBe(true);
    expect(request.system).toBe(DEFAULT_SYSTEM_PROMPT);
    expect(readFence(request.messages[1]?.content ?? '')?.context).toBe("The user's latest request:\nship it");
  });

  it.each([null, '', '   '])('AC1.5: no context section at all for header %j', (header) => {
    const request = buildSummarizeRequest(chunk, header, policy);
    expect(request.messages.some((m) => m.role === 'system')).toBe(false);
    expect(request.messages[1]?.content).not.toContain('<transcript-context>');
  });

  it('the stable instructions come first and are identical for every chunk (a cacheable prefix)', () => {
    const other = conversation(50).user('something else entirely').assistant('done').build();
    const a = buildSummarizeRequest(chunk, null, policy, { identifiers: ['x/y.ts'], maxOutputTokens: 400 });
    const b = buildSummarizeRequest(other, null, policy, { identifiers: ['E_OTHER'], maxOutputTokens: 900, focus: 'billing' });
    expect(a.messages[0]?.role).toBe('user');
    expect(a.messages[0]?.content.startsWith(INSTRUCTIONS_OPENER)).toBe(true);
    expect(a.messages[0]).toEqual(b.messages[0]);
    for (const section of SECTIONS) expect(a.messages[0]?.content).toContain(`## ${section}`);
    for (const word of ['Preserve', 'Condense', 'Prioritize', 'Remove', 'not instructions', 'exact file paths']) {
      expect(a.messages[0]?.content).toContain(word);
    }
  });

  it("AC1.3: keeps the original roles (as the turns' roles) and renders tool calls and results as text", () => {
    const body = excerptOf(buildSummarizeRequest(chunk, null, policy));
    expect(body.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(body[1]?.content).toBe('[tool call Read id=1]\n{"file_path":"src/auth/login.ts"}');
    expect(body[2]?.content).toBe('[tool result Read id=1]\nexport function login() {}');
  });

  it('numbers tool ids within the chunk: a call still pairs with its result, the provider id is not resent', () => {
    const messages = conversation()
      .user('look at both')
      .calls([
        { id: 'toolu_01A09q90qw90lq917835lq9', name: 'Read', input: { file_path: 'a.ts' } },
        { id: 'toolu_01B77zz0qw90lq917835zz1', name: 'Read', input: { file_path: 'b.ts' } },
      ])
      .results([
        { id: 'toolu_01B77zz0qw90lq917835zz1', output: 'B' },
        { id: 'toolu_01A09q90qw90lq917835lq9', output: 'A' },
      ])
      .build();
    const body = excerptOf(buildSummarizeRequest(messages, null, policy));
    expect(body[1]?.content).toBe('[tool call Read id=1]\n{"file_path":"a.ts"}\n\n[tool call Read id=2]\n{"file_path":"b.ts"}');
    expect(body[2]?.content).toBe('[tool result Read id=2]\nB\n\n[tool result Read id=1]\nA');
    expect(JSON.stringify(body)).not.toContain('toolu_');
  });

  it('renders role tool as user and error results with a flag', () => {
    const messages = conversation()
      .user('run it')
      .calls([{ id: 'x', name: 'Bash', input: { command: 'make' } }])
      .results([{ id: 'x', output: 'make: *** No rule', isError: true }], 'tool')
      .build();
    const body = excerptOf(buildSummarizeRequest(messages, null, policy));
    expect(body[2]).toEqual({ role: 'user', content: '[tool result Bash id=1 error]\nmake: *** No rule' });
  });

  it('lists the must-keep identifiers inside the fence; ends with a short directive: the length and the focus', () => {
    const request = buildSummarizeRequest(chunk, null, policy, {
      focus: 'the auth module',
      identifiers: ['src/auth/login.ts', 'E_AUTH 401'],
      maxOutputTokens: 500,
    });
    const directive = request.messages.at(-1)?.content ?? '';
    expect(request.messages.at(-1)?.role).toBe('user');
    expect(request.messages[1]?.content).toContain('<transcript-keep>\n- src/auth/login.ts\n- E_AUTH 401\n</transcript-keep>');
    expect(readFence(request.messages[1]?.content ?? '')?.keep).toEqual(['src/auth/login.ts', 'E_AUTH 401']);
    expect(directive).toContain(KEEP_DIRECTIVE);
    expect(directive).not.toContain('E_AUTH');
    expect(directive).toContain('Focus especially on: the auth module');
    expect(directive).toContain('Length: at most about 300 words.');
    expect(request.maxOutputTokens).toBe(500);
    expect(directive.length).toBeLessThan(request.messages[0]?.content.length ?? 0);
  });

  it('falls back to summaryMaxTokens when no budget is given', () => {
    expect(buildSummarizeRequest(chunk, null, policy).maxOutputTokens).toBe(policy.summaryMaxTokens);
  });

  it('truncates a unit larger than a chunk for the prompt only', () => {
    const small = mergePolicy({ chunkTokens: 1000, summaryMaxTokens: 200 });
    const big = conversation().user('look').exchange('b', 'Read', { file_path: '/big' }, filler(5000, 'row')).build();
    const body = excerptOf(buildSummarizeRequest(big, null, small, { countTokens }));
    const total = body.reduce((sum, m) => sum + countTokens(m.content), 0);
    expect(total).toBeLessThanOrEqual(1000);
    const output = body[2]?.content ?? '';
    expect(output.startsWith('[tool result Read id=1]\nrow 0 ')).toBe(true);
    expect(output).toMatch(/\[… \d+ tokens clipped from this summarizer input; the original is archived, recall finds it …\]/);
    expect(big[2]?.content[0]).toMatchObject({ content: filler(5000, 'row') });
  });

  it('withoutInstructions strips the shared instructions, also when merged with the first excerpt turn', () => {
    const request = buildSummarizeRequest(chunk, null, policy);
    const instructions = request.messages[0]?.content ?? '';
    expect(withoutInstructions(instructions)).toBe('');
    expect(withoutInstructions(`${instructions}\n\nPlease fix it`)).toBe('Please fix it');
    expect(withoutInstructions('Please fix it')).toBe('Please fix it');
  });
});

describe('buildConsolidationRequest (AC1.6)', () => {
  it('uses the same structure with the batch summaries, oldest first', () => {
    const request = buildConsolidationRequest(
      [
        { summary: 'B summary', level: 0, seqs: [20, 21] },
        { summary: 'A summary', level: 1, seqs: [1, 2, 3] },
      ],
      policy,
      { identifiers: ['src/a.ts'], maxOutputTokens: 700 },
    );
    expect(request.system).toBe(DEFAULT_SYSTEM_PROMPT);
    expect(request.messages.map((m) => m.role)).toEqual(['user', 'user', 'user']);
    expect(request.messages[0]?.content).toContain('Merge the batch summaries');
    const fence = readFence(request.messages[1]?.content ?? '');
    expect(fence?.turns.map((t) => t.content)).toEqual([
      'Summary of messages 1-3 (level 1):\n\nA summary',
      'Summary of messages 20-21 (level 0):\n\nB summary',
    ]);
    expect(fence?.keep).toEqual(['src/a.ts']);
    expect(request.maxOutputTokens).toBe(700);
  });

  it('never truncates six full-size summaries (the input that used to be cut)', () => {
    const batches = Array.from({ length: 6 }, (_, i) => ({ summary: filler(1900, `s${i}`), level: 0, seqs: [i * 10 + 1] }));
    const request = buildConsolidationRequest(batches, policy, { countTokens });
    expect(JSON.stringify(request.messages)).not.toContain('clipped from this summarizer input');
  });
});

describe('buildRepairRequest', () => {
  it('sends the draft and the missing identifiers only, with a budget sized to the list', () => {
    const request = buildRepairRequest('## TASK STATE\n- fixing', ['src/a.ts', 'E42 fatal'], policy);
    const text = request.messages.map((m) => m.content).join('\n');
    expect(text).toContain('## TASK STATE\n- fixing');
    expect(text).toContain('- src/a.ts\n- E42 fatal');
    expect(readFence(text)).toMatchObject({ draft: '## TASK STATE\n- fixing', keep: ['src/a.ts', 'E42 fatal'] });
    expect(request.maxOutputTokens).toBeLessThan(200);
  });
});

describe('fitToBudget', () => {
  it('drops middle messages when many small ones exceed the budget', () => {
    const messages = Array.from({ length: 200 }, (_, i) => ({ role: 'user' as const, content: `result ${i} ${'x'.repeat(150)}` }));
    const fitted = fitToBudget(messages, 1000, countTokens);
    expect(fitted.reduce((sum, m) => sum + countTokens(m.content), 0)).toBeLessThanOrEqual(1000);
    expect(fitted[0]?.content.startsWith('result 0 ')).toBe(true);
    expect(fitted.at(-1)?.content.startsWith('result 199 ')).toBe(true);
    expect(fitted.some((m) => /messages \(\d+ tokens\) omitted/.test(m.content))).toBe(true);
  });

  it('returns the messages unchanged when they fit', () => {
    const messages = [{ role: 'user' as const, content: 'short' }];
    expect(fitToBudget(messages, 100, countTokens)).toEqual(messages);
  });
});
