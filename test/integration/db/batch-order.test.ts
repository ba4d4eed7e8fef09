import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadBatchSummariesByIds, loadLiveBatches } from '../../../src/db/repos/snapshot.js';
import { batches } from '../../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { storeRealSession } from '../../helpers/session-rows.js';

/**
 * The batches of one commit share its transaction's timestamp. Read back, they must come in
 * the order of the spans they cover, whatever order they were written in: the clip-archive
 * renders them in that order and a consolidation merges their ledgers in it (newest wins).
 */

let db: TestDatabase;
let conversationId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  conversationId = await storeRealSession(db, 'batch-order', 'spotter-claude-code/short.jsonl');
});
afterAll(async () => {
  await db?.drop();
});

describe('batches of one commit', () => {
  it('are read oldest span first, live or by id, though written newest first', async () => {
    const jobId = randomUUID();
    const spans = [
      [30, 31],
      [20, 21, 22],
      [10, 11],
    ];
    const written = await db.db.transaction(async (tx) =>
      tx
        .insert(batches)
        .values(
          spans.map((seqs) => ({
            conversationId,
            jobId,
            level: 0,
            summary: `seqs ${seqs.join(',')}`,
            seqs,
            sourceMessages: seqs.length,
            sourceTokens: 100,
            summaryTokens: 10,
            model: 'local:local',
          })),
        )
        .returning({ id: batches.id, createdAt: batches.createdAt }),
    );
    expect(new Set(written.map((b) => b.createdAt.getTime())).size).toBe(1);

    const oldestFirst = [
      [10, 11],
      [20, 21, 22],
      [30, 31],
    ];
    expect((await loadLiveBatches(db.db, conversationId)).map((b) => b.seqs)).toEqual(oldestFirst);
    const byIds = await loadBatchSummariesByIds(
      db.db,
      written.map((b) => b.id),
    );
    expect(byIds.map((b) => b.seqs)).toEqual(oldestFirst);
  });
});
