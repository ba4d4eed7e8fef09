import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { insertBatches, moveToArchive } from '../../../src/db/repos/compaction-writes.js';
import { insertJob } from '../../../src/db/repos/jobs.js';
import { listActiveMessages } from '../../../src/db/repos/messages.js';
import { compactionJobs, conversations } from '../../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { storeRealSession } from '../../helpers/session-rows.js';

/**
 * The commit's archive move reads the summarized seqs and their batches from the job's level-0
 * batches in Postgres: every archived row must still get its own seq's batch and reason (nulls
 * included), the removed ones leave the active history and the rewritten ones keep a new
 * version; another job's batches and a re-summary's are left alone.
 */

let db: TestDatabase;
let conversationId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  conversationId = await storeRealSession(db, 'archive-move', 'spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl');
});
afterAll(async () => {
  await db?.drop();
});

describe('moveToArchive', () => {
  it('archives every seq with its own batch and reason, removes the summarized and rewrites the rest', async () => {
    const active = await listActiveMessages(db.db, conversationId);
    const [conversation] = await db.db
      .select({ tenantId: conversations.tenantId })
      .from(conversations)
      .where(eq(conversations.id, conversationId));
    const job = await insertJob(db.db, { tenantId: conversation!.tenantId, conversationId, trigger: 'api', options: {} });
    const seqs = active.slice(0, 30).map((m) => m.seq);
    const batchRow = (i: number, covered: number[]) => ({
      conversationId,
      jobId: job!.id,
      level: 0,
      summary: `summary ${i}`,
      seqs: covered,
      sourceMessages: covered.length,
      sourceTokens: 1,
      summaryTokens: 1,
      model: 'm',
    });
    const summarized = seqs.slice(0, 24);
    const batchIds = (await insertBatches(db.db, [batchRow(0, summarized.slice(0, 10)), batchRow(1, summarized.slice(10))])).map(
      (b) => b.id,
    );
    const rewritten = seqs.slice(24, 27);
    const clip = seqs.slice(27, 28);
    const expected = [
      ...summarized.map((seq, i) => ({ seq, batchId: batchIds[i < 10 ? 0 : 1]!, reason: 'summarized' })),
      ...rewritten.map((seq, i) => ({ seq, batchId: null, reason: i === 0 ? 'truncated' : 'masked' })),
      ...clip.map((seq) => ({ seq, batchId: null, reason: 'superseded_clip' })),
    ];
    // neither another job's batch nor a level-1 batch of this one is moved
    const [other] = await db.db
      .insert(compactionJobs)
      .values({ tenantId: conversation!.tenantId, conversationId, status: 'completed', trigger: 'api', finishedAt: new Date() })
      .returning({ id: compactionJobs.id });
    await insertBatches(db.db, [
      { ...batchRow(2, seqs.slice(28, 30)), jobId: other!.id },
      { ...batchRow(3, seqs.slice(28, 30)), level: 1 },
    ]);
    await moveToArchive(db.db, {
      conversationId,
      jobId: job!.id,
      rewrites: rewritten.map((seq, i) => ({
        seq,
        reason: i === 0 ? 'truncated' : 'masked',
        content: [{ type: 'text', text: `rewritten ${seq}` }],
        tokens: 3,
      })),
      supersededClipSeq: clip[0]!,
    });
    const archived = await db.sql<Array<{ seq: string; batch_id: string | null; reason: string }>>`
      select seq, batch_id, reason from archived_messages where conversation_id = ${conversationId} order by seq`;
    expect(archived.map((r) => ({ seq: Number(r.seq), batchId: r.batch_id, reason: r.reason }))).toEqual(
      expected.sort((a, b) => a.seq - b.seq),
    );
    const after = await listActiveMessages(db.db, conversationId);
    expect(after.map((m) => m.seq)).toEqual(active.map((m) => m.seq).filter((seq) => !summarized.includes(seq) && !clip.includes(seq)));
    expect(after.filter((m) => rewritten.includes(m.seq)).map((m) => m.tokens)).toEqual([3, 3, 3]);
  });
});
