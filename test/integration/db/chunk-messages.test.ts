import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadChunkMessages } from '../../../src/db/repos/chunks.js';
import { listActiveMessages } from '../../../src/db/repos/messages.js';
import { toHistoryMessage } from '../../../src/db/repos/snapshot.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { storeRealSession } from '../../helpers/session-rows.js';

/**
 * A summarize step reads its chunk's messages with only the columns a HistoryMessage holds:
 * on a real session (meta turns, tool pairs, images) they must equal the full rows mapped by
 * `toHistoryMessage`, whatever the chunk's seqs.
 */

let db: TestDatabase;
let conversationId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  conversationId = await storeRealSession(db, 'chunk-messages', 'spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl');
});
afterAll(async () => {
  await db?.drop();
});

describe('loadChunkMessages', () => {
  it('returns the chunk seqs in seq order, each as toHistoryMessage maps its full row', async () => {
    const full = (await listActiveMessages(db.db, conversationId)).map(toHistoryMessage);
    expect(full.some((m) => m.meta !== undefined)).toBe(true);
    const every = full.map((m) => m.seq);
    expect(await loadChunkMessages(db.db, conversationId, every)).toEqual(full);
    // a chunk with gaps (a pinned message kept out), given out of order
    const gaps = every.filter((_, i) => i % 3 !== 1).slice(0, 40);
    expect(await loadChunkMessages(db.db, conversationId, [...gaps].reverse())).toEqual(full.filter((m) => gaps.includes(m.seq)));
  });

  it('returns no message for an empty chunk nor for seqs no longer active', async () => {
    expect(await loadChunkMessages(db.db, conversationId, [])).toEqual([]);
    expect(await loadChunkMessages(db.db, conversationId, [9_000_000, 9_000_001])).toEqual([]);
  });
});
