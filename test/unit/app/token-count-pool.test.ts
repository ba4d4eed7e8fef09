import { afterAll, describe, expect, it } from 'vitest';

import { createTokenCountPool } from '../../../src/app/token-count-pool.js';
import { countTokens } from '../../../src/lib/count-tokens.js';
import { BIG_TEXT_SHAPES, bigText } from '../../helpers/big-texts.js';

const pool = createTokenCountPool(2);
afterAll(() => pool.close());

describe('token count pool', () => {
  it('counts every shape as the inline count does, more texts than threads at once', async () => {
    const texts = BIG_TEXT_SHAPES.map((shape) => bigText(shape, 40_000));
    expect(await Promise.all(texts.map((text) => pool.count(text)))).toEqual(texts.map((text) => countTokens(text)));
    expect(await pool.count('<|endoftext|> is text here')).toBe(countTokens('<|endoftext|> is text here'));
  }, 60_000);

  it('counts thousands of small texts sent at once (in batches) each as the inline count does', async () => {
    const texts = Array.from({ length: 3_000 }, (_, i) => `message ${i}: ${'edited src/file_' + i + '.ts '.repeat(1 + (i % 7))}`);
    expect(await Promise.all(texts.map((text) => pool.count(text)))).toEqual(texts.map((text) => countTokens(text)));
  }, 60_000);

  it('keeps the event loop free while a thread counts 2 MB of the densest shape', async () => {
    const text = bigText('base64', 2 * 1024 * 1024);
    let maxGapMs = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      maxGapMs = Math.max(maxGapMs, now - last);
      last = now;
    }, 5);
    const tokens = await pool.count(text).finally(() => clearInterval(ticker));
    expect(tokens).toBeGreaterThan(1_000_000);
    // inline, the loop would be blocked the whole ~4 s count; generous for a shared machine
    expect(maxGapMs).toBeLessThan(1_000);
  }, 60_000);

  it('refuses counts once closed', async () => {
    const closing = createTokenCountPool(1);
    await closing.count('warm the thread up');
    await closing.close();
    await expect(closing.count('late')).rejects.toThrow('closed');
  });
});
