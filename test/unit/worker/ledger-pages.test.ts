import { describe, expect, it } from 'vitest';

import { extractLedger, type Ledger } from '../../../src/compaction/ledger/index.js';
import { LEDGER_PAGE_SIZE, mergedLedger, mergeStoredLedgers, type StatefulBatch } from '../../../src/worker/commit-parts.js';
import { conversation } from '../../fixtures/builders.js';

/** A consolidation merges its batches' stored ledgers a page at a time, to the same ledger as all at once. */

function batchAt(i: number): StatefulBatch {
  const first = 1 + i * 10;
  const messages = conversation(first)
    .user(`Step ${i}: keep the build green. Never edit vendor/${i % 7}.`)
    .exchange(
      `e${i}`,
      'Edit',
      { file_path: `/repo/lib/mod${i % 13}.ex`, old_string: 'a', new_string: `b${i}` },
      'The file has been updated.',
    )
    .exchange(
      `b${i}`,
      'Bash',
      { command: 'mix test' },
      i % 3 === 0 ? '** (KeyError) key :pane_id not found\nExit code 1' : `${i} tests, 0 failures`,
      i % 3 === 0,
    )
    .build();
  // every fifth batch predates ledgers
  const ledger = i % 5 === 4 ? null : extractLedger(messages);
  return { id: `batch-${String(i).padStart(4, '0')}`, level: 0, summary: `summary ${i}`, seqs: messages.map((m) => m.seq), ledger };
}

describe('mergeStoredLedgers', () => {
  // stored in an order unrelated to coverage: the merge orders them itself
  const batches = Array.from({ length: LEDGER_PAGE_SIZE * 2 + 37 }, (_, i) => batchAt(i)).reverse();
  const stored = new Map(batches.map((b) => [b.id, b.ledger ?? null]));

  it('equals the merge of every ledger at once, reading each ledger once and a page at a time', async () => {
    const pages: string[][] = [];
    const merged = await mergeStoredLedgers(batches, async (ids) => {
      pages.push([...ids]);
      return new Map(ids.map((id) => [id, stored.get(id) ?? null]));
    });
    expect(merged).toEqual(mergedLedger(batches));
    expect(pages).toHaveLength(3);
    expect(Math.max(...pages.map((p) => p.length))).toBeLessThanOrEqual(LEDGER_PAGE_SIZE);
    expect(pages.flat().sort()).toEqual(batches.map((b) => b.id).sort());
    // the later success of `mix test` resolves the errors of earlier pages
    expect((merged as Ledger).errors.every((e) => e.resolved)).toBe(true);
  });

  it('is null when no batch has a ledger', async () => {
    const old = batches.map((b) => ({ ...b, ledger: null }));
    expect(await mergeStoredLedgers(old, async (ids) => new Map(ids.map((id) => [id, null])))).toBeNull();
  });
});
