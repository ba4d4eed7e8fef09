import { describe, expect, it } from 'vitest';

import { parseSections, summarizeLocally } from '../../../../src/compaction/local/local-summarizer.js';
import { planCompaction } from '../../../../src/compaction/plan/plan.js';
import { toolResultText } from '../../../../src/compaction/render.js';
import { clipErrorLine, errorLines, findMissingIdentifiers } from '../../../../src/compaction/summarize/identifiers.js';
import { buildConsolidationRequest, buildSummarizeRequest, SECTIONS } from '../../../../src/compaction/summarize/prompt.js';
import { validateSummaryOutput } from '../../../../src/compaction/summarize/validate-output.js';
import type { HistoryMessage } from '../../../../src/compaction/types.js';
import { mergePolicy } from '../../../../src/config/policy.js';
import { conversation, countTokens } from '../../../fixtures/builders.js';
import { loadRealTranscripts, realCountTokens } from '../real-transcripts.js';

const policy = mergePolicy();
const options = { countTokens, maxTokens: 2000 };

const chunk = conversation()
  .user('The login endpoint returns 500. Fix it, but never change the public API of src/auth/index.ts.')
  .exchange('t1', 'Read', { file_path: '/app/src/auth/login.ts' }, 'export async function login(req) {\n  return db.find(req.user)\n}')
  .exchange(
    't2',
    'Bash',
    { command: 'npm test -- auth' },
    "FAIL src/auth/login.test.ts\nTypeError: Cannot read properties of undefined (reading 'user')",
    true,
  )
  .assistant('The root cause is a missing body parser. I decided to validate req.body before the lookup because the route is public.')
  .exchange(
    't3',
    'Edit',
    { file_path: '/app/src/auth/login.ts', old_string: 'a', new_string: 'b' },
    'The file /app/src/auth/login.ts has been updated.',
  )
  .assistant('Next, I will run the full test suite and then update docs/auth.md.')
  .build();

function sectionsOf(summary: string) {
  return parseSections(summary);
}

describe('summarizeLocally: chunks', () => {
  const summary = summarizeLocally(buildSummarizeRequest(chunk, null, policy), options);
  const sections = sectionsOf(summary);

  it('writes the seven sections in order and passes output validation', () => {
    const headings = summary
      .split('\n')
      .filter((line) => line.startsWith('## '))
      .map((line) => line.slice(3));
    expect(headings).toEqual([...SECTIONS]);
    expect(validateSummaryOutput(summary, 'end_turn')).toEqual({ ok: true });
  });

  it.each([
    ['TASK STATE', 'Latest request: The login endpoint returns 500.'],
    ['TASK STATE', 'Progress: 3 tool calls (1 failed), 1 files edited or written'],
    ['FILES', '/app/src/auth/login.ts (edited)'],
    ['FILES', 'src/auth/index.ts'],
    ['FILES', 'docs/auth.md'],
    ['TOOL HISTORY', 'Bash npm test -- auth → error: FAIL src/auth/login.test.ts'],
    ['TOOL HISTORY', 'Read /app/src/auth/login.ts → export async function login(req) {'],
    ['ERRORS', "TypeError: Cannot read properties of undefined (reading 'user')"],
    ['ERRORS', 'FAIL src/auth/login.test.ts'],
    ['DECISIONS', 'I decided to validate req.body before the lookup because the route is public.'],
    ['DECISIONS', 'The root cause is a missing body parser.'],
    ['USER GUIDANCE', 'Fix it, but never change the public API of src/auth/index.ts.'],
    ['NEXT STEPS', 'Next, I will run the full test suite and then update docs/auth.md.'],
  ] as const)('%s holds %s', (section, item) => {
    expect(sections.get(section)?.some((line) => line.includes(item))).toBe(true);
  });

  it('lists items chronologically and marks empty sections', () => {
    const empty = summarizeLocally(buildSummarizeRequest(conversation().assistant('ok').build(), null, policy), options);
    expect(sectionsOf(empty).get('ERRORS')).toBeUndefined();
    expect(empty).toContain('## ERRORS\n- none');
    const tools = sections.get('TOOL HISTORY') ?? [];
    expect(tools.map((line) => line.split(' ')[0])).toEqual(['Read', 'Bash', 'Edit']);
  });

  it('is deterministic', () => {
    expect(summarizeLocally(buildSummarizeRequest(chunk, null, policy), options)).toBe(summary);
  });

  it('stays within the budget, keeping errors and files first', () => {
    const small = summarizeLocally(buildSummarizeRequest(chunk, null, policy), { countTokens, maxTokens: 170 });
    expect(countTokens(small)).toBeLessThanOrEqual(170);
    expect(small).toContain("TypeError: Cannot read properties of undefined (reading 'user')");
    expect(small).toContain('/app/src/auth/login.ts');
    expect(small.length).toBeLessThan(summary.length);
  });

  it('does not summarize the orientation header', () => {
    const request = buildSummarizeRequest(chunk, '## FILES\n- /old/legacy.c', policy);
    expect(summarizeLocally(request, options)).not.toContain('/old/legacy.c');
  });

  it('includes the identifiers the directive names', () => {
    const request = buildSummarizeRequest(chunk, null, policy, { identifiers: ['PROJ-77', '250ms'] });
    const retried = summarizeLocally(request, options);
    expect(findMissingIdentifiers(['PROJ-77', '250ms'], retried)).toEqual([]);
  });

  it('moves items matching the focus first within their section', () => {
    const builder = conversation();
    for (let i = 0; i < 30; i += 1) builder.exchange(`c${i}`, 'Read', { file_path: `/src/module${i}/file${i}.ts` }, 'ok');
    builder.exchange('z', 'Read', { file_path: '/src/billing/invoice.ts' }, 'ok');
    const request = buildSummarizeRequest(builder.build(), null, policy, { focus: 'billing invoices' });
    const focused = summarizeLocally(request, { countTokens, maxTokens: 200 });
    expect(focused).toContain('/src/billing/invoice.ts');
  });

  it('treats observation-style user turns as tool output, not guidance', () => {
    const messages = conversation()
      .user('Please fix the bug in utils.py; you must not touch tests.')
      .assistant('THOUGHT: look around\n```bash\nls\n```')
      .user('<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\nValueError: you must pass x\n</output>')
      .build();
    const result = sectionsOf(summarizeLocally(buildSummarizeRequest(messages, null, policy), options));
    expect(result.get('USER GUIDANCE')).toEqual(['Please fix the bug in utils.py; you must not touch tests.']);
    expect(result.get('ERRORS')).toContain('ValueError: you must pass x');
  });
});

describe('summarizeLocally: re-summaries', () => {
  const older =
    '## TASK STATE\n- Latest request: add login\n## FILES\n- /app/a.ts (edited)\n## ERRORS\n- TypeError: x\n## NEXT STEPS\n- write tests';
  const newer = '## TASK STATE\n- Latest request: add logout\n## FILES\n- /app/a.ts (edited)\n- /app/b.ts (read)\n## NEXT STEPS\n- none';

  it('merges the sections of the batch summaries, deduplicated', () => {
    const request = buildConsolidationRequest(
      [
        { summary: newer, level: 0, seqs: [40, 41] },
        { summary: older, level: 0, seqs: [1, 2] },
      ],
      policy,
    );
    const merged = sectionsOf(summarizeLocally(request, options));
    expect(merged.get('FILES')).toEqual(['/app/a.ts (edited)', '/app/b.ts (read)']);
    expect(merged.get('TASK STATE')).toEqual(['Latest request: add login', 'Latest request: add logout']);
    expect(merged.get('ERRORS')).toEqual(['TypeError: x']);
    expect(merged.get('NEXT STEPS')).toEqual(['write tests']);
  });

  it('keeps the newest facts when the budget is tight', () => {
    const request = buildConsolidationRequest(
      [
        { summary: older, level: 0, seqs: [1] },
        { summary: newer, level: 0, seqs: [40] },
      ],
      policy,
    );
    const tight = summarizeLocally(request, { countTokens, maxTokens: 70 });
    expect(countTokens(tight)).toBeLessThanOrEqual(70);
    expect(tight).toContain('add logout');
    expect(tight).not.toContain('add login');
  });
});

function expectedPathsAndErrors(messages: readonly HistoryMessage[]): { paths: string[]; errors: string[] } {
  const paths = new Set<string>();
  const errors = new Set<string>();
  for (const block of messages.flatMap((m) => m.content)) {
    if (block.type === 'tool_use') {
      const filePath = (block.input as Record<string, unknown> | null)?.['file_path'];
      if (typeof filePath === 'string') paths.add(filePath);
    }
    if (block.type === 'tool_result') {
      const output = toolResultText(block);
      const lines = errorLines(output);
      const first = output
        .split('\n')
        .find((line) => line.trim().length > 0)
        ?.trim();
      if (block.is_error === true && lines.length === 0 && first) lines.push(clipErrorLine(first));
      for (const line of lines) errors.add(line);
    }
  }
  return { paths: [...paths], errors: [...errors] };
}

describe('summarizeLocally on a real Claude Code session', () => {
  it('keeps every file path and error line of each chunk within the summary budget', () => {
    const session = loadRealTranscripts().find((t) => t.name.includes('8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl (full)'));
    if (!session) throw new Error('the Claude Code session 8463c716 is missing from the shared transcripts');
    const plan = planCompaction(
      { messages: session.messages, contextLimit: 400_000, previousSummaries: [] },
      policy,
      { trigger: 'api' },
      realCountTokens,
    );
    if (plan.kind !== 'plan') throw new Error(`expected a plan, got ${plan.reason}`);
    expect(plan.chunks.length).toBeGreaterThan(5);
    let errorsSeen = 0;
    for (const chunk of plan.chunks) {
      const wanted = new Set(chunk.seqs);
      const messages = session.messages.filter((m) => wanted.has(m.seq));
      const request = buildSummarizeRequest(messages, null, policy, { countTokens: realCountTokens });
      const summary = summarizeLocally(request, { countTokens: realCountTokens, maxTokens: policy.summaryMaxTokens });
      expect(realCountTokens(summary)).toBeLessThanOrEqual(policy.summaryMaxTokens);
      const { paths, errors } = expectedPathsAndErrors(messages);
      errorsSeen += errors.length;
      expect(
        paths.filter((p) => !summary.includes(p)),
        `chunk ${chunk.index} paths`,
      ).toEqual([]);
      expect(
        errors.filter((e) => !summary.includes(e)),
        `chunk ${chunk.index} errors`,
      ).toEqual([]);
    }
    expect(errorsSeen).toBeGreaterThan(5);
  });
});

describe('parseSections', () => {
  it.each([
    ['markdown headings', '## TASK STATE\n- a\n## FILES\n- /x.ts'],
    ['numbered headings with colons', '1. TASK STATE:\n- a\n2. FILES:\n- /x.ts'],
    ['bold headings', '**TASK STATE**\n- a\n**FILES**\n- /x.ts'],
    ['lower-case markdown headings', '### Task State\n- a\n### Files\n- /x.ts'],
    ['inline content', 'TASK STATE: a\nFILES: /x.ts'],
  ])('reads %s', (_name, summary) => {
    const sections = parseSections(summary);
    expect(sections.get('TASK STATE')).toEqual(['a']);
    expect(sections.get('FILES')).toEqual(['/x.ts']);
  });

  it('does not take a sentence for a heading', () => {
    const sections = parseSections('## TASK STATE\n- Files changed: /a.ts\nErrors were fixed.');
    expect(sections.get('TASK STATE')).toEqual(['Files changed: /a.ts', 'Errors were fixed.']);
    expect(sections.get('FILES')).toBeUndefined();
  });
});
