import { describe, expect, it } from 'vitest';

import { buildSummarizeRequest, clippedMarker } from '../../../src/compaction/summarize/prompt.js';
import { readFence } from '../../../src/compaction/summarize/request-fence.js';
import { headWithin, tailWithin, truncateMiddle, WINDOW_CHARS_PER_TOKEN } from '../../../src/compaction/text.js';
import type { CountTokens } from '../../../src/compaction/types.js';
import { mergePolicy } from '../../../src/config/policy.js';
import { conversation, countTokens } from '../../fixtures/builders.js';

/**
 * Issue 26 item 2: a message up to COMPACTD_MAX_MESSAGE_BYTES (2 MB) can sit in a chunk; the
 * summarizer sees it clipped (head + tail within the budget, an explicit marker), and the
 * cut costs work bounded by the budget, not by the message: the tokenizer is handed a
 * window near each cut, never the whole message again (SPEC §8: linear in the input).
 */

const MAX_MESSAGE_BYTES = 2 * 1024 * 1024;

/** A counter that records how many characters it was handed. */
function meteredCounter(): { count: CountTokens; chars: () => number; calls: () => number } {
  let chars = 0;
  let calls = 0;
  return {
    count: (text) => {
      chars += text.length;
      calls += 1;
      return countTokens(text);
    },
    chars: () => chars,
    calls: () => calls,
  };
}

const SHAPES: Array<[string, string]> = [
  ['prose', 'The deploy failed because the migration locked the users table for too long. '],
  ['a token-dense log line', '2026-11-25T08:00:00Z ERR id=9f3a2c7e code=E_LOCK_TIMEOUT path=/srv/app/db/migrate.ts:42\n'],
  ['whitespace', ' '],
  ['one long line', 'x'],
];

describe('a huge message is clipped for the summarizer (issue 26 item 2)', () => {
  it.each(SHAPES)('a 2 MB message of %s: head and tail kept around the marker, within the chunk budget', (_shape, unit) => {
    const huge = `START ${unit.repeat(Math.ceil(MAX_MESSAGE_BYTES / unit.length)).slice(0, MAX_MESSAGE_BYTES - 12)} END`;
    const policy = mergePolicy({ chunkTokens: 4_000 });
    const chunk = conversation().user('please look at this log').user(huge).assistant('I read it.').build();
    // the worker's chunks carry the size counted at ingest
    chunk[1]!.tokens = countTokens(huge);
    const meter = meteredCounter();
    const request = buildSummarizeRequest(chunk, null, policy, {
      countTokens: meter.count,
      storedTokens: true,
      fenceId: 'abcdef0123456789',
    });
    const turns = readFence(request.messages[1]!.content)!.turns;
    const clipped = turns[1]!.content;
    expect(clipped.startsWith('START ')).toBe(true);
    expect(clipped.endsWith(' END')).toBe(true);
    expect(clipped).toMatch(/\n\[… \d+ tokens clipped from this summarizer input; the original is archived, recall finds it …\]\n/);
    expect(turns.reduce((sum, t) => sum + countTokens(t.content), 0)).toBeLessThanOrEqual(policy.chunkTokens);
    expect(turns[0]!.content).toBe('please look at this log');
    expect(turns[2]!.content).toBe('I read it.');
    // the tokenizer never saw the whole message: a few windows of the budget's size
    expect(meter.chars()).toBeLessThan(policy.chunkTokens * WINDOW_CHARS_PER_TOKEN * 6);
    expect(meter.chars()).toBeLessThan(huge.length / 4);
  });

  it('without stored sizes the message is counted once, and the cut itself stays within windows', () => {
    const huge = 'row 1 ok\n'.repeat(200_000);
    const meter = meteredCounter();
    const policy = mergePolicy({ chunkTokens: 2_000, summaryMaxTokens: 500 });
    buildSummarizeRequest(conversation().user(huge).build(), null, policy, { countTokens: meter.count, fenceId: 'abcdef0123456789' });
    expect(meter.chars()).toBeLessThan(huge.length + policy.chunkTokens * WINDOW_CHARS_PER_TOKEN * 6);
  });

  it('the work of a cut does not grow with the message (10× the message, the same characters counted)', () => {
    const charsCounted = (size: number) => {
      const meter = meteredCounter();
      const text = 'abc def ghi\n'.repeat(size / 12);
      truncateMiddle(text, 700, 300, meter.count, clippedMarker, countTokens(text));
      return meter.chars();
    };
    const small = charsCounted(120_000);
    const large = charsCounted(1_200_000);
    expect(large).toBeLessThanOrEqual(small * 1.5);
  });

  it('headWithin and tailWithin cut at the budget whatever the text beyond their window', () => {
    const text = `${'a'.repeat(10_000)}${'b '.repeat(1_000_000)}${'z'.repeat(10_000)}`;
    expect(countTokens(headWithin(text, 100, countTokens))).toBeLessThanOrEqual(100);
    expect(headWithin(text, 100, countTokens).startsWith('aaaa')).toBe(true);
    expect(countTokens(tailWithin(text, 100, countTokens))).toBeLessThanOrEqual(100);
    expect(tailWithin(text, 100, countTokens).endsWith('zzzz')).toBe(true);
    // never splits a surrogate pair at a window's edge
    const emoji = '\u{1F600}'.repeat(50_000);
    expect(headWithin(emoji, 10, countTokens)).not.toMatch(/[\uD800-\uDBFF]$/);
    expect(tailWithin(emoji, 10, countTokens)).not.toMatch(/^[\uDC00-\uDFFF]/);
  });
});
