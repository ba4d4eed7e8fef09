import { createRequire } from 'node:module';

import { describe, expect, it } from 'vitest';

import { loadO200kRanks } from '../../../src/lib/o200k-ranks.js';

/** gpt-tokenizer's generated table, the one its own o200k_base encoding uses. */
const generatedTable = (): Array<string | number[]> =>
  (createRequire(import.meta.url)('gpt-tokenizer/cjs/bpeRanks/o200k_base') as { default: Array<string | number[]> }).default;

describe('o200k ranks read from the data file', () => {
  it('are rank for rank the table gpt-tokenizer generated: the same text, or the same bytes where a token is not UTF-8', () => {
    const read = loadO200kRanks();
    const generated = generatedTable();
    expect(read.length).toBe(generated.length);
    const differing = read.flatMap((entry, rank) => (JSON.stringify(entry) === JSON.stringify(generated[rank]) ? [] : [rank]));
    expect(differing).toEqual([]);
    // both kinds occur, so the comparison covers the UTF-8 rule (a token kept as bytes included)
    expect(read.some((entry) => Array.isArray(entry))).toBe(true);
    expect(read.filter((entry) => typeof entry === 'string').length).toBeGreaterThan(190_000);
  });
});
