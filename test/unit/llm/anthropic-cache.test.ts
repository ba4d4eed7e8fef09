import { describe, expect, it } from 'vitest';

import { buildSummarizeRequest } from '../../../src/compaction/summarize/index.js';
import type { HistoryMessage } from '../../../src/compaction/types.js';
import { mergePolicy } from '../../../src/config/policy.js';
import { buildAnthropicParams } from '../../../src/llm/anthropic.js';

const turn = (seq: number, role: 'user' | 'assistant', text: string): HistoryMessage => ({
  seq,
  role,
  kind: 'message',
  content: [{ type: 'text', text }],
  tokens: 12,
  toolUseIds: [],
  toolResultIds: [],
});
const chunk = [
  turn(1, 'user', 'Fix the failing test in src/lru.test.ts'),
  turn(2, 'assistant', 'The eviction order was wrong; fixed in src/lru.ts:88.'),
];

describe('prompt caching of chunk calls', () => {
  it("marks the shared instructions with a breakpoint when the system prompt and they reach the model's minimum", () => {
    const policy = mergePolicy({
      systemPrompt: `You summarize agent transcripts for a platform. ${'Keep every path and error verbatim. '.repeat(150)}`,
    });
    const params = buildAnthropicParams(buildSummarizeRequest(chunk, null, policy), 'claude-sonnet-4-5');
    const first = params.messages[0]!;
    expect(Array.isArray(first.content)).toBe(true);
    const blocks = first.content as Array<{ type: string; text: string; cache_control?: unknown }>;
    expect(blocks[0]?.cache_control).toEqual({ type: 'ephemeral' });
    // the breakpoint closes the instructions: the excerpt, which differs per chunk, follows it
    expect(blocks[0]?.text).not.toContain('src/lru.ts:88');
    expect(
      blocks
        .slice(1)
        .map((b) => b.text)
        .join(''),
    ).toContain('src/lru.ts:88');
    expect(blocks.slice(1).some((b) => b.cache_control !== undefined)).toBe(false);
  });

  it('marks nothing below the minimum (the default prompt), nor for a model the registry does not know', () => {
    const short = buildAnthropicParams(buildSummarizeRequest(chunk, null, mergePolicy({})), 'claude-haiku-4-5');
    expect(typeof short.messages[0]?.content).toBe('string');
    const long = mergePolicy({ systemPrompt: 'x '.repeat(9_000) });
    expect(typeof buildAnthropicParams(buildSummarizeRequest(chunk, null, long), 'some-local-model').messages[0]?.content).toBe('string');
    // Haiku's minimum is twice Sonnet's
    const between = mergePolicy({ systemPrompt: 'word '.repeat(1_200) });
    expect(typeof buildAnthropicParams(buildSummarizeRequest(chunk, null, between), 'claude-haiku-4-5').messages[0]?.content).toBe(
      'string',
    );
    expect(Array.isArray(buildAnthropicParams(buildSummarizeRequest(chunk, null, between), 'claude-sonnet-4-5').messages[0]?.content)).toBe(
      true,
    );
  });
});
