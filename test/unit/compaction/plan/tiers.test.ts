import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { chunkUnits } from '../../../../src/compaction/plan/chunk.js';
import { maskOptions, truncateOversized } from '../../../../src/compaction/plan/tiers.js';
import { groupUnits } from '../../../../src/compaction/plan/units.js';
import { headWithin, tailWithin, truncateMiddle } from '../../../../src/compaction/text.js';
import type { Block } from '../../../../src/compaction/types.js';
import { mergePolicy } from '../../../../src/config/policy.js';
import { conversation, countTokens, filler, makeMessage, text, toolResult, toolUse } from '../../../fixtures/builders.js';

const policy = mergePolicy({ tier1: { maxTokens: 300, headTokens: 100, tailTokens: 50 }, tier2: { minTokens: 40 } });

describe('token-budgeted cutting', () => {
  it('keeps head and tail within their budgets around the marker (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 4000, unit: 'grapheme' }),
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 300 }),
        (input, head, tail) => {
          const out = truncateMiddle(input, head, tail, countTokens, (n) => `[cut ${n}]`);
          if (countTokens(input) <= head + tail) return out === input;
          const [before, after] = out.split(/\n\[cut \d+\]\n/);
          return (
            before !== undefined &&
            after !== undefined &&
            input.startsWith(before) &&
            input.endsWith(after) &&
            countTokens(before) <= head &&
            countTokens(after) <= tail
          );
        },
      ),
    );
  });

  it('never splits a surrogate pair', () => {
    const emoji = '😀'.repeat(500);
    const head = headWithin(emoji, 33, countTokens);
    const tail = tailWithin(emoji, 33, countTokens);
    expect(head.length % 2).toBe(0);
    expect(tail.length % 2).toBe(0);
    expect([...head].every((ch) => ch === '😀')).toBe(true);
  });

  it('cuts at line ends when one is near', () => {
    const lines = filler(400, 'row');
    const head = headWithin(lines, 100, countTokens);
    expect(lines.startsWith(head)).toBe(true);
    expect(lines[head.length]).toBe('\n');
  });
});

describe('Tier 1: truncateOversized', () => {
  it('truncates only oversized tool outputs, keeping ids, flags and other blocks', () => {
    const big = filler(1000, 'log');
    const messages = [
      makeMessage(7, 'user', [toolResult('a', big, true), toolResult('b', 'small'), text('note')]),
      makeMessage(8, 'assistant', [text(filler(1000)), toolUse('c', 'Bash', { command: 'x' })]),
    ];
    const rewrites = truncateOversized(groupUnits(messages), policy, countTokens);
    expect([...rewrites.keys()]).toEqual([7]);
    const rewrite = rewrites.get(7);
    expect(rewrite?.reason).toBe('truncated');
    expect(rewrite?.tokensBefore).toBe(messages[0]?.tokens);
    expect(rewrite?.tokensAfter).toBeLessThan(rewrite?.tokensBefore ?? 0);
    const [first, second, third] = rewrite?.content ?? [];
    expect(first).toMatchObject({ type: 'tool_result', tool_use_id: 'a', is_error: true });
    expect(JSON.stringify(first)).toContain('the full output is archived with message seq 7');
    expect(second).toEqual(toolResult('b', 'small'));
    expect(third).toEqual(text('note'));
  });

  it('flattens image parts of an oversized result into text', () => {
    const content: Block[] = [
      {
        type: 'tool_result',
        tool_use_id: 'i',
        content: [
          { type: 'image', source: { type: 'url', url: 'u' } },
          { type: 'text', text: filler(1000) },
        ],
      },
    ];
    const rewrite = truncateOversized(groupUnits([makeMessage(1, 'user', content)]), policy, countTokens).get(1);
    const block = rewrite?.content[0];
    // the image stays named by its reference (the archive holds the original)
    expect(
      block?.type === 'tool_result' && typeof block.content === 'string' && /^\[image img:[0-9a-f]{12}: u\]\n/.test(block.content),
    ).toBe(true);
  });
});

describe('Tier 2: maskOptions', () => {
  it('offers masks oldest first, on top of Tier 1, skipping outputs below minTokens', () => {
    const messages = conversation()
      .exchange('a', 'Read', { file_path: '/a' }, filler(200))
      .exchange('b', 'Grep', { pattern: 'x' }, 'tiny')
      .exchange('c', 'Bash', { command: 'y' }, filler(1000))
      .build();
    const units = groupUnits(messages);
    const truncated = truncateOversized(units, policy, countTokens);
    const options = maskOptions(units, truncated, policy, countTokens);
    expect(options.map((o) => o.rewrite.seq)).toEqual([2, 6]);
    expect(options[1]?.previous).toBe(truncated.get(6));
    expect(options[1]?.savingTokens).toBe((truncated.get(6)?.tokensAfter ?? 0) - (options[1]?.rewrite.tokensAfter ?? 0));
    expect(options[1]?.rewrite.tokensBefore).toBe(messages[5]?.tokens);
    expect(JSON.stringify(options[0]?.rewrite.content)).toContain('output of Read masked to save context');
    expect(JSON.stringify(options[0]?.rewrite.content)).toContain('archived with message seq 2');
  });
});

describe('chunkUnits', () => {
  it('cuts the selected units, in time order, into contiguous runs; an oversized unit alone', () => {
    const messages = conversation().user('a').user('b').user('c').user('d').user('e').build();
    const units = groupUnits(messages);
    const chunks = chunkUnits(
      [
        { unit: units[2]!, inputTokens: 60 },
        { unit: units[0]!, inputTokens: 30 },
        { unit: units[3]!, inputTokens: 500 },
        { unit: units[1]!, inputTokens: 40 },
        { unit: units[4]!, inputTokens: 20 },
      ],
      100,
    );
    expect(chunks.map((c) => [c.index, c.seqs, c.sourceTokens, c.truncatedForPrompt])).toEqual([
      [0, [1, 2], 70, false],
      [1, [3], 60, false],
      [2, [4], 100, true],
      [3, [5], 20, false],
    ]);
  });

  it('spreads the tokens evenly instead of leaving a sliver', () => {
    const builder = conversation();
    for (let i = 0; i < 10; i += 1) builder.user(`m${i}`);
    const units = groupUnits(builder.build());
    const chunks = chunkUnits(
      units.map((unit) => ({ unit, inputTokens: 30 })),
      100,
    );
    // 300 tokens need 3 chunks of ≤100; balanced runs of 90–120 would overflow, so 4 runs at most
    expect(chunks.length).toBeLessThanOrEqual(4);
    expect(Math.min(...chunks.map((c) => c.sourceTokens))).toBeGreaterThanOrEqual(60);
  });

  it('never lets two chunks interleave in time (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 3000 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 100, max: 2000 }),
        fc.func(fc.integer()),
        (sizes, limit, order) => {
          const builder = conversation();
          for (let i = 0; i < sizes.length; i += 1) builder.user(`m${i}`);
          const units = groupUnits(builder.build());
          const shuffled = units.map((unit, i) => ({ unit, inputTokens: sizes[i] ?? 1, key: order(i) })).sort((a, b) => a.key - b.key);
          const chunks = chunkUnits(shuffled, limit);
          return chunks.every((chunk, i) => i === 0 || (chunks[i - 1]!.seqs.at(-1) as number) < (chunk.seqs[0] as number));
        },
      ),
    );
  });

  it('never exceeds chunkTokens and places every unit once (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 3000 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 100, max: 2000 }),
        (sizes, limit) => {
          const builder = conversation();
          for (let i = 0; i < sizes.length; i += 1) builder.user(`m${i}`);
          const units = groupUnits(builder.build());
          const chunks = chunkUnits(
            units.map((unit, i) => ({ unit, inputTokens: sizes[i] ?? 1 })),
            limit,
          );
          const seqs = chunks.flatMap((c) => c.seqs).sort((a, b) => a - b);
          return chunks.every((c) => c.sourceTokens <= limit) && seqs.join() === units.map((u) => u.seqs[0]).join();
        },
      ),
    );
  });
});
