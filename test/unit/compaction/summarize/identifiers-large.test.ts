import { describe, expect, it } from 'vitest';

import { extractFacts } from '../../../../src/compaction/local/local-extract.js';
import { rankChunkIdentifiers } from '../../../../src/compaction/summarize/identifiers.js';
import type { HistoryMessage } from '../../../../src/compaction/types.js';

/**
 * One message at the size limit holds ~150k identifiers or error lines: every step over them
 * must be iterative (an argument spread over them threw `Maximum call stack size exceeded`).
 */
const COUNT = 200_000;
const manyPaths = Array.from({ length: COUNT }, (_, i) => `/srv/app/f${i}.ts`).join(' ');
const manyErrors = Array.from({ length: COUNT }, (_, i) => `Error: failed ${i}`).join('\n');

const message = (role: HistoryMessage['role'], content: HistoryMessage['content']): HistoryMessage =>
  ({ seq: 1, role, content }) as HistoryMessage;

describe('identifier ranking and extraction at the message size limit', () => {
  it('ranks 200k identifiers of one text block without overflowing the stack', () => {
    const ranked = rankChunkIdentifiers([message('user', [{ type: 'text', text: `${manyPaths}\n${manyErrors}` }])]);
    expect(ranked.byKind.path).toHaveLength(COUNT);
    expect(ranked.byKind.error).toHaveLength(COUNT);
    expect(ranked.ordered[0]).toBe('Error: failed 0');
  });

  it('ranks 200k identifiers of a tool input and a tool result', () => {
    const ranked = rankChunkIdentifiers([
      message('assistant', [{ type: 'tool_use', id: 't1', name: 'Bash', input: { note: manyPaths } }]),
      message('user', [{ type: 'tool_result', tool_use_id: 't1', content: manyErrors }]),
    ]);
    expect(ranked.byKind.path).toHaveLength(COUNT);
    expect(ranked.byKind.error).toHaveLength(COUNT);
  });

  it('collects 200k error lines for the local summarizer', () => {
    const facts = extractFacts([{ role: 'user', content: manyErrors }]);
    expect(facts.errors.length).toBe(COUNT);
  });
});
