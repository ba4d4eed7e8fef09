import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { buildConsolidationRequest, buildSummarizeRequest } from '../../../src/compaction/summarize/index.js';
import { mergePolicy } from '../../../src/config/policy.js';
import { buildAnthropicParams } from '../../../src/llm/anthropic.js';
import { buildOpenAIParams } from '../../../src/llm/openai.js';
import { validateAnthropicRequest } from '../../../src/llm-sim/validate-anthropic.js';
import { validateOpenAIRequest } from '../../../src/llm-sim/validate-openai.js';
import { conversationArb } from '../compaction/arbitraries.js';

/**
 * The summarize and re-summarize requests compactd sends, as each adapter puts them on the
 * wire, follow the providers' message rules (the chunk's system-role header goes to the
 * top-level `system` for Anthropic; the turns open with a user message; no blank text).
 */

const focusArb = fc.option(fc.constantFrom('the auth bug', '  '), { nil: undefined });
const systemPromptArb = fc.option(fc.constantFrom('Summarize.', ' '), { nil: undefined });

describe('summarize requests on the wire', () => {
  it('a chunk of any conversation, with or without a previous summary and focus', () => {
    fc.assert(
      fc.property(
        conversationArb,
        fc.option(fc.constantFrom('## TASK STATE\n- earlier', ' '), { nil: null }),
        focusArb,
        systemPromptArb,
        ({ messages }, previous, focus, systemPrompt) => {
          const policy = mergePolicy(systemPrompt === undefined ? {} : { systemPrompt });
          const request = buildSummarizeRequest(messages, previous, policy, focus === undefined ? {} : { focus });
          expect(validateAnthropicRequest(buildAnthropicParams(request, 'claude-haiku-4-5'))).toBeNull();
          expect(validateOpenAIRequest(buildOpenAIParams(request, 'gpt-4o-mini'))).toBeNull();
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a re-summary of older batches', () => {
    const batches = fc.array(
      fc.record({
        summary: fc.constantFrom('## TASK STATE\n- a', 'x'),
        level: fc.nat(3),
        seqs: fc.array(fc.nat(500), { minLength: 1, maxLength: 5 }),
      }),
      { minLength: 1, maxLength: 6 },
    );
    fc.assert(
      fc.property(batches, (list) => {
        const request = buildConsolidationRequest(list, mergePolicy());
        expect(validateAnthropicRequest(buildAnthropicParams(request, 'claude-haiku-4-5'))).toBeNull();
        expect(validateOpenAIRequest(buildOpenAIParams(request, 'gpt-4o-mini'))).toBeNull();
      }),
    );
  });
});
