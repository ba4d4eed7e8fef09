import { describe, expect, it } from 'vitest';

import { OFF_LOOP_MIN_CHARS, prepareAppend, prepareAppendOffLoop } from '../../../src/api/append-messages.js';
import { countTokens } from '../../../src/lib/count-tokens.js';
import { bigText } from '../../helpers/big-texts.js';

const MAX = 2 * 1024 * 1024;
const appendOf = (...texts: string[]) => ({
  format: 'anthropic' as const,
  messages: texts.map((text) => ({ role: 'user', content: text })),
});

describe('prepareAppendOffLoop', () => {
  it('counts a small append inline, without a round trip to a thread', async () => {
    const sent: string[] = [];
    const input = appendOf('hello', 'world '.repeat(100));
    const prepared = await prepareAppendOffLoop(input, {
      countTokens,
      countTokensOffLoop: async (text) => (sent.push(text), countTokens(text)),
      maxMessageBytes: MAX,
    });
    expect(sent).toEqual([]);
    expect(prepared).toEqual(prepareAppend(input, { countTokens, maxMessageBytes: MAX }));
  });

  it('sends each long text of a big append off the loop once, counts a short one on the loop, and stores the inline counts', async () => {
    const big = bigText('base64', OFF_LOOP_MIN_CHARS);
    const sent: string[] = [];
    const input = appendOf(big, 'short', big);
    const prepared = await prepareAppendOffLoop(input, {
      countTokens,
      countTokensOffLoop: async (text) => (sent.push(text), countTokens(text)),
      maxMessageBytes: MAX,
    });
    expect(sent).toEqual([big]);
    expect(prepared).toEqual(prepareAppend(input, { countTokens, maxMessageBytes: MAX }));
  });

  it('shares many short texts between the loop and the threads, one share each, and stores the inline counts', async () => {
    const texts = Array.from({ length: 600 }, (_, i) => `turn ${i}: ${'edited src/module_' + i + '.ts and ran the tests; '.repeat(3)}`);
    for (const threads of [1, 3]) {
      const sent: string[] = [];
      const input = appendOf(...texts);
      const prepared = await prepareAppendOffLoop(input, {
        countTokens,
        countTokensOffLoop: async (text) => (sent.push(text), countTokens(text)),
        offLoopThreads: threads,
        maxMessageBytes: MAX,
      });
      const share = sent.reduce((sum, text) => sum + text.length, 0) / texts.reduce((sum, text) => sum + text.length, 0);
      expect(share).toBeCloseTo(threads / (threads + 1), 1);
      expect(prepared).toEqual(prepareAppend(input, { countTokens, maxMessageBytes: MAX }));
    }
  });

  it('counts inline what a failed thread could not, and reports the failure', async () => {
    const input = appendOf(bigText('cjk', 4 * OFF_LOOP_MIN_CHARS));
    const failures: unknown[] = [];
    const prepared = await prepareAppendOffLoop(input, {
      countTokens,
      countTokensOffLoop: () => Promise.reject(new Error('thread exited')),
      onOffLoopFailure: (error) => failures.push(error),
      maxMessageBytes: MAX,
    });
    expect(failures).toHaveLength(1);
    expect(prepared).toEqual(prepareAppend(input, { countTokens, maxMessageBytes: MAX }));
  });

  it('rejects a message over the limit before counting anything', async () => {
    const sent: string[] = [];
    const run = prepareAppendOffLoop(appendOf(bigText('prose', 600)), {
      countTokens,
      countTokensOffLoop: async (text) => (sent.push(text), 1),
      maxMessageBytes: 512,
    });
    await expect(run).rejects.toMatchObject({ code: 'MESSAGE_TOO_LARGE', status: 413 });
    expect(sent).toEqual([]);
  });
});
