import { describe, expect, it } from 'vitest';
import { mergePolicy } from '../../../src/config/policy.js';
import {
  buildResummarizeRequest,
  buildSummarizeRequest,
  DEFAULT_SYSTEM_PROMPT,
  EXCERPT_OPENER,
  fitToBudget,
  previousSummaryText,
  SECTIONS,
} from '../../../src/compaction/prompt.js';
import { conversation, countTokens, filler } from '../../fixtures/builders.js';

const policy = mergePolicy();
const chunk = conversation(10)
  .user('Please fix the login bug in src/auth/login.ts')
  .exchange('t1', 'Read', { file_path: 'src/auth/login.ts' }, 'export function login() {}')
  .assistant('I will patch it.')
  .build();

describe('buildSummarizeRequest (seed 003 AC1)', () => {
  it('AC1.1/AC4.4: uses the default system prompt when none is configured', () => {
    expect(buildSummarizeRequest(chunk, null, policy).system).toBe(DEFAULT_SYSTEM_PROMPT);
  });

  it('AC4.3: uses a configured prompt as-is, with no persona added', () => {
    const custom = mergePolicy({ systemPrompt: 'You are Lasa. Summarize like Lasa would.' });
    const request = buildSummarizeRequest(chunk, null, custom);
    expect(request.system).toBe('You are Lasa. Summarize like Lasa would.');
    expect(JSON.stringify(request.messages)).not.toContain('Lasa');
  });

  it('AC1.2: passes the previous summary as a system-role context message first', () => {
    const request = buildSummarizeRequest(chunk, '## TASK STATE\n- earlier', policy);
    expect(request.messages[0]?.role).toBe('system');
    expect(request.messages[0]?.content).toContain('## TASK STATE\n- earlier');
    expect(request.messages.filter((m) => m.role === 'system')).toHaveLength(1);
  });

  it.each([null, '', '   '])('AC1.5: no context message at all for previous summary %j', (previous) => {
    const request = buildSummarizeRequest(chunk, previous, policy);
    expect(request.messages.some((m) => m.role === 'system')).toBe(false);
  });

  it('AC1.3: keeps the original roles and renders tool calls and results as text', () => {
    const request = buildSummarizeRequest(chunk, null, policy);
    const body = request.messages.slice(0, -1);
    expect(body.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(body[1]?.content).toBe('[tool call Read id=t1]\n{"file_path":"src/auth/login.ts"}');
    expect(body[2]?.content).toBe('[tool result Read id=t1]\nexport function login() {}');
  });

  it('renders role tool as user and error results with a flag', () => {
    const messages = conversation()
      .user('run it')
      .calls([{ id: 'x', name: 'Bash', input: { command: 'make' } }])
      .results([{ id: 'x', output: 'make: *** No rule', isError: true }], 'tool')
      .build();
    const request = buildSummarizeRequest(messages, null, policy);
    expect(request.messages[2]).toEqual({ role: 'user', content: '[tool result Bash id=x error]\nmake: *** No rule' });
  });

  it('opens with a user turn when the chunk starts with an assistant message', () => {
    const messages = conversation().assistant('I looked around.').user('ok').build();
    const request = buildSummarizeRequest(messages, null, policy);
    expect(request.messages[0]).toEqual({ role: 'user', content: EXCERPT_OPENER });
  });

  it('AC1.4: ends with a user directive naming the seven sections and the rules', () => {
    const request = buildSummarizeRequest(chunk, null, policy, { focus: 'the auth module' });
    const directive = request.messages.at(-1);
    expect(directive?.role).toBe('user');
    for (const section of SECTIONS) expect(directive?.content).toContain(`## ${section}`);
    for (const word of ['Preserve', 'Condense', 'Prioritize', 'Remove', 'not instructions', 'exact file paths']) {
      expect(directive?.content).toContain(word);
    }
    expect(directive?.content).toContain('Focus especially on: the auth module');
    expect(request.maxOutputTokens).toBe(policy.summaryMaxTokens);
  });

  it('names missing identifiers on a retry', () => {
    const request = buildSummarizeRequest(chunk, null, policy, { missingIdentifiers: ['src/auth/login.ts', 'E_AUTH 401'] });
    expect(request.messages.at(-1)?.content).toContain('- src/auth/login.ts\n- E_AUTH 401');
  });

  it('truncates a unit larger than a chunk for the prompt only', () => {
    const small = mergePolicy({ chunkTokens: 1000, summaryMaxTokens: 200 });
    const big = conversation().user('look').exchange('b', 'Read', { file_path: '/big' }, filler(5000, 'row')).build();
    const request = buildSummarizeRequest(big, null, small, { countTokens });
    const body = request.messages.slice(0, -1);
    const total = body.reduce((sum, m) => sum + countTokens(m.content), 0);
    expect(total).toBeLessThanOrEqual(1000);
    const output = body[2]?.content ?? '';
    expect(output.startsWith('[tool result Read id=b]\nrow 0 ')).toBe(true);
    expect(output).toContain('tokens omitted from this summarizer input');
    expect(big[2]?.content[0]).toMatchObject({ content: filler(5000, 'row') });
  });
});

describe('buildResummarizeRequest (AC1.6)', () => {
  it('uses the same structure with the batch summaries, oldest first', () => {
    const request = buildResummarizeRequest(
      [
        { summary: 'B summary', level: 0, seqs: [20, 21] },
        { summary: 'A summary', level: 1, seqs: [1, 2, 3] },
      ],
      policy,
    );
    expect(request.system).toBe(DEFAULT_SYSTEM_PROMPT);
    expect(request.messages.map((m) => m.role)).toEqual(['user', 'user', 'user']);
    expect(request.messages[0]?.content).toBe('Summary of messages 1-3 (level 1):\n\nA summary');
    expect(request.messages[1]?.content).toBe('Summary of messages 20-21 (level 0):\n\nB summary');
    expect(request.messages[2]?.content).toContain('Merge the summaries above');
    for (const section of SECTIONS) expect(request.messages[2]?.content).toContain(`## ${section}`);
  });
});

describe('previousSummaryText', () => {
  it('is null without batches and joins summaries oldest first otherwise', () => {
    expect(previousSummaryText([])).toBeNull();
    const text = previousSummaryText([
      { id: 'b', level: 0, summary: 'second', seqs: [9] },
      { id: 'a', level: 0, summary: 'first', seqs: [1] },
    ]);
    expect(text).toBe('Summary of messages 1:\nfirst\n\nSummary of messages 9:\nsecond');
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
