import { describe, expect, it } from 'vitest';

import { makeImage } from '../../../../harness/images.js';
import { planCompaction } from '../../../../src/compaction/plan/plan.js';
import type { Block, HistoryMessage, ImageBlock } from '../../../../src/compaction/types.js';
import { mergePolicy } from '../../../../src/config/policy.js';
import { countTokens, filler, makeMessage, makeSnapshot, text, toolResult, toolUse } from '../../../fixtures/builders.js';

/** policy.keepImages (SPEC §5.6c): the newest images the user sent stay verbatim, those of tool results do not count. */

const image = (seed: number): ImageBlock => ({
  type: 'image',
  source: { type: 'base64', media_type: 'image/png', data: makeImage('png', 64, 48, seed).toString('base64') },
});

/** 30 turns; the user sends a screenshot at turns 3 and 10, a tool returns one at turn 15. */
function history(): HistoryMessage[] {
  const messages: HistoryMessage[] = [];
  let seq = 1;
  for (let turn = 0; turn < 30; turn += 1) {
    const asked: Block[] = [text(`Turn ${turn}: ${filler(200)}`)];
    if (turn === 3 || turn === 10) asked.push(image(turn));
    messages.push(makeMessage(seq++, 'user', asked));
    if (turn === 15) {
      messages.push(makeMessage(seq++, 'assistant', [toolUse(`shot${turn}`, 'Screenshot')]));
      messages.push(makeMessage(seq++, 'user', [{ ...toolResult(`shot${turn}`, ''), content: [image(100)] }]));
    }
    messages.push(makeMessage(seq++, 'assistant', `Answer ${turn}: ${filler(200)}`));
  }
  return messages;
}

const summarizedSeqs = (keepImages: number): Set<number> => {
  const result = planCompaction(
    makeSnapshot(history(), 100_000),
    mergePolicy({ keepImages }),
    { trigger: 'api', keepRecent: 4 },
    countTokens,
  );
  if (result.kind !== 'plan') throw new Error(`expected a plan, got ${result.reason}`);
  return new Set(result.chunks.flatMap((chunk) => chunk.seqs));
};

const seqOfUserImage = (turn: number) =>
  history().find((m) => m.role === 'user' && m.content.some((b) => b.type === 'text' && b.text.startsWith(`Turn ${turn}:`)))!.seq;

describe('keepImages', () => {
  it('keeps the newest image the user sent by default, summarizing the older one', () => {
    const summarized = summarizedSeqs(mergePolicy().keepImages);
    expect(summarized.has(seqOfUserImage(10))).toBe(false);
    expect(summarized.has(seqOfUserImage(3))).toBe(true);
  });

  it('keeps as many as asked, and none with 0; a tool result’s image never counts', () => {
    const two = summarizedSeqs(2);
    expect(two.has(seqOfUserImage(10)) || two.has(seqOfUserImage(3))).toBe(false);
    const toolImageSeq = history().find((m) => m.content.some((b) => b.type === 'tool_result'))!.seq;
    expect(two.has(toolImageSeq)).toBe(true);
    const none = summarizedSeqs(0);
    expect(none.has(seqOfUserImage(10))).toBe(true);
  });
});
