import { describe, expect, it } from 'vitest';

import { parseSections, summarizeLocally } from '../../../src/compaction/local/local-summarizer.js';
import { extractChunkIdentifiers, extractIdentifiers } from '../../../src/compaction/summarize/identifiers.js';
import { buildConsolidationRequest, buildSummarizeRequest } from '../../../src/compaction/summarize/index.js';
import { mergePolicy } from '../../../src/config/policy.js';
import { conversation, countTokens } from '../../fixtures/builders.js';

/**
 * Core losses the summary fidelity eval found on the real transcripts (EVAL.md), pinned
 * here with the smallest inputs that showed them.
 */

const policy = mergePolicy();

describe('URLs in JSON-escaped tool output (session 8463c716, WebSearch results)', () => {
  // the tool output holds JSON text, so a URL is followed by an escaped quote: `657\"}`
  const output = 'Links: [{\\"title\\":\\"Issue\\",\\"url\\":\\"https://github.com/xtermjs/xterm.js/issues/657\\"},{\\"title\\":\\"x\\"}]';

  it('extracts the URL (and quoted strings) without the escape backslash', () => {
    const found = extractIdentifiers(output);
    expect(found.filter((id) => id.startsWith('https://'))).toEqual(['https://github.com/xtermjs/xterm.js/issues/657']);
    expect(found.filter((id) => id.endsWith('\\'))).toEqual([]);
  });

  it('checks the same URL in a chunk and lists it so in a local summary', () => {
    const messages = conversation()
      .user('Search for xterm issues about selection colours.')
      .exchange('w1', 'WebSearch', { query: 'xterm selection colour' }, output)
      .assistant(`The raw result was ${output}`)
      .build();
    expect(extractChunkIdentifiers(messages, 60).filter((id) => id.startsWith('https://'))).toEqual([
      'https://github.com/xtermjs/xterm.js/issues/657',
    ]);
    const files = parseSections(summarizeLocally(buildSummarizeRequest(messages, null, policy), { countTokens, maxTokens: 2000 })).get(
      'FILES',
    );
    expect(files).toContain('https://github.com/xtermjs/xterm.js/issues/657');
  });
});

describe('local re-summary keeps the user’s request (session 4d5611e5: "Work on bead spotter-dov…" was dropped)', () => {
  const status = (n: number) =>
    `## TASK STATE\n- Progress: ${n} tool calls (0 failed), 1 files edited or written\n- Latest assistant status: step ${n} of the refactoring is done and the tests pass again\n## FILES\n- /app/lib/step_${n}.ex (edited)`;
  const batches = [
    {
      summary:
        '## TASK STATE\n- Latest request: Work on bead spotter-dov and start with the first ready task\n## FILES\n- /app/lib/a.ex (read)',
      level: 0,
      seqs: [1, 2],
    },
    ...[3, 4, 5, 6].map((n) => ({ summary: status(n), level: 0, seqs: [n * 10] })),
  ];

  it('chooses the oldest batch’s request before newer progress lines when the budget is tight', () => {
    const merged = summarizeLocally(buildConsolidationRequest(batches, policy), { countTokens, maxTokens: 150 });
    expect(countTokens(merged)).toBeLessThanOrEqual(150);
    expect(parseSections(merged).get('TASK STATE')?.[0]).toBe(
      'Latest request: Work on bead spotter-dov and start with the first ready task',
    );
  });

  it('still keeps the newest status lines when there is room', () => {
    const merged = parseSections(summarizeLocally(buildConsolidationRequest(batches, policy), { countTokens, maxTokens: 2000 }));
    expect(merged.get('TASK STATE')).toContain('Latest assistant status: step 6 of the refactoring is done and the tests pass again');
  });
});
