import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';

import { chunkOutputBudget } from '../../../src/compaction/plan/budget.js';
import { buildSummarizeRequest, IDENTIFIERS_HEADING, rankChunkIdentifiers } from '../../../src/compaction/summarize/index.js';
import type { HistoryMessage } from '../../../src/compaction/types.js';
import { DEFAULT_POLICY } from '../../../src/config/policy.js';
import type { Summarizers } from '../../../src/llm/create-summarizer.js';
import { createLocalSummarizer } from '../../../src/llm/local.js';
import { summarizeGuarded } from '../../../src/worker/guarded-summary.js';

/**
 * The identifier gate (SPEC §5.6a) on a chunk whose source holds a huge number of
 * identifiers: one minified line of key=hex pairs, the shape of the abuse suite's long-line
 * message. The identifiers an answer lacks are counted, never appended as a raw list (they
 * used to be, and a summary then outgrew its source).
 */

/** ~600 KB on one line, no whitespace: `k0=a087eaf3,00b349c9;k1=…` (~60k identifiers). */
function longLine(): string {
  const parts: string[] = [];
  let x = 1;
  const hex = () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x.toString(16).padStart(8, '0');
  };
  for (let i = 0; i < 24_000; i += 1) parts.push(`k${i}=${hex()},${hex()};`);
  return parts.join('');
}

describe('summarizeGuarded: identifiers an answer lacks', () => {
  it('keeps a summary of a source with tens of thousands of identifiers within its budget, counting what it lacks', async () => {
    const text = longLine();
    const tokens = countTokens(text);
    const message: HistoryMessage = {
      seq: 3,
      role: 'user',
      kind: 'message',
      content: [{ type: 'text', text }],
      tokens,
      toolUseIds: [],
      toolResultIds: [],
    };
    const identifiers = rankChunkIdentifiers([message]).ordered;
    expect(identifiers.length).toBeGreaterThan(20_000);
    const policy = DEFAULT_POLICY;
    const budget = chunkOutputBudget(policy, tokens);
    const summarizers = { local: createLocalSummarizer({ countTokens }) } as unknown as Summarizers;

    const result = await summarizeGuarded({
      buildRequest: (max) =>
        buildSummarizeRequest([message], null, policy, {
          countTokens,
          storedTokens: true,
          fenceId: 'f00dfeedcafe0001',
          maxOutputTokens: max,
        }),
      budget,
      identifiers,
      selection: { provider: 'local', model: 'local' },
      summarizers,
      policy,
      signal: new AbortController().signal,
      localMaxTokens: budget,
    });

    const summaryTokens = countTokens(result.summary);
    expect(summaryTokens).toBeLessThanOrEqual(budget);
    expect(result.summary).not.toContain(IDENTIFIERS_HEADING);
    expect(result.identifiers.total).toBe(identifiers.length);
    expect(result.identifiers.found).toBeLessThan(result.identifiers.total);
  });
});
