import { randomUUID } from 'node:crypto';

import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { indexArchiveForRecall } from '../../../src/db/repos/recall-index.js';
import { archivedMessages, archivedRecallIndexed, archivedRecallPieces, conversations, tenants } from '../../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

/**
 * An indexing loop reads the archive once between its passes: each pass starts after the
 * last original the previous one read (its `next`), instead of skipping, from the start, every
 * original the loop already indexed. A pass without a cursor still finds an original left
 * unindexed before it (an earlier failure's backlog).
 */

let db: TestDatabase;
let conversationId: string;
const archiveIds: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const [tenant] = await db.db.insert(tenants).values({ name: 'recall-cursor' }).returning();
  const [conversation] = await db.db
    .insert(conversations)
    .values({ tenantId: tenant!.id, externalId: 'recall-cursor', contextLimit: 200_000 })
    .returning();
  conversationId = conversation!.id;
  const rows = Array.from({ length: 9 }, (_, i) => ({
    id: randomUUID(),
    conversationId,
    seq: i + 1,
    role: 'user' as const,
    content: [{ type: 'text' as const, text: `message ${i + 1} about the parser in src/parser-${i + 1}.ts` }],
    tokens: 12,
    reason: 'summarized' as const,
  }));
  const written = await db.db
    .insert(archivedMessages)
    .values(rows)
    .returning({ archiveId: archivedMessages.archiveId, seq: archivedMessages.seq });
  archiveIds.push(...written.sort((a, b) => Number(a.seq) - Number(b.seq)).map((r) => r.archiveId));
});
afterAll(async () => {
  await db?.drop();
});

async function indexedSeqs(): Promise<number[]> {
  const rows = await db.db
    .select({ seq: archivedMessages.seq })
    .from(archivedRecallIndexed)
    .innerJoin(archivedMessages, eq(archivedMessages.archiveId, archivedRecallIndexed.archiveId))
    .where(eq(archivedRecallIndexed.conversationId, conversationId));
  return rows.map((r) => Number(r.seq)).sort((a, b) => a - b);
}

describe('recall indexing passes', () => {
  it('continue after the cursor, leave what lies before it, and a pass without one finds it', async () => {
    const first = await indexArchiveForRecall(db.db, conversationId, { limit: 3 });
    expect(first).toMatchObject({ messages: 3, more: true, next: { seq: '3', archiveId: archiveIds[2] } });

    // seq 2 loses its marker and pieces, as if its indexing had failed: a loop's next pass does not go back for it
    await db.db.delete(archivedRecallPieces).where(eq(archivedRecallPieces.archiveId, archiveIds[1]!));
    await db.db.delete(archivedRecallIndexed).where(eq(archivedRecallIndexed.archiveId, archiveIds[1]!));
    const second = await indexArchiveForRecall(db.db, conversationId, { limit: 3, after: first.next });
    expect(second).toMatchObject({ messages: 3, more: true, next: { seq: '6' } });
    expect(await indexedSeqs()).toEqual([1, 3, 4, 5, 6]);

    const third = await indexArchiveForRecall(db.db, conversationId, { limit: 3, after: second.next });
    expect(third).toMatchObject({ messages: 3, more: false, next: { seq: '9' } });
    expect(await indexArchiveForRecall(db.db, conversationId, { limit: 3, after: third.next })).toEqual({
      messages: 0,
      pieces: 0,
      more: false,
      next: null,
    });

    // a new loop starts from the beginning: the backlog before the old cursor is found
    const fresh = await indexArchiveForRecall(db.db, conversationId, { limit: 3 });
    expect(fresh).toMatchObject({ messages: 1, more: false, next: { seq: '2', archiveId: archiveIds[1] } });
    expect(await indexedSeqs()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});
