import { type SQL, sql, TransactionRollbackError } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { activeTotalsForCommitSql, archiveMessages, moveToArchiveSql } from '../../../src/db/repos/compaction-writes.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

/**
 * The commit's statements that match a job's seqs against the active history must cost in
 * proportion to the seqs whatever Postgres's statistics say. The case that broke a 10,000-message
 * commit (5 s instead of ~20 ms): a conversation that grew after the last ANALYZE is estimated
 * at about one row, and a join then re-reads the whole seq list once per message. Here that
 * conversation is set up the same way, and hash and merge joins are switched off, so a
 * statement that leaves the planner a join to choose gets the nested loop; the test reads the
 * rows every plan node produced (EXPLAIN ANALYZE, rows × loops), not a time.
 */

const SIZE = 3_000;
const TENANT = '00000000-0000-4000-8000-000000000001';
const BIG = '00000000-0000-4000-8000-0000000000b1';
const JOB = '00000000-0000-4000-8000-0000000000a1';
const CHUNK = 100;

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  const d = db.db;
  await d.execute(sql`insert into tenants (id, name) values (${TENANT}, 'plans')`);
  // many small conversations, analyzed: one more conversation is then estimated at ~1 row
  await d.execute(sql`
    insert into conversations (id, tenant_id, external_id, context_limit)
    select gen_random_uuid(), ${TENANT}, 'small-' || g, 200000 from generate_series(1, 4000) g`);
  await d.execute(sql`
    insert into messages (conversation_id, seq, role, content, tokens)
    select c.id, s, 'user', '[]'::jsonb, 1 from conversations c cross join generate_series(1, 2) s`);
  await d.execute(sql`analyze`);
  // the big conversation arrives after the statistics, as in a conversation that just grew
  await d.execute(sql`insert into conversations (id, tenant_id, external_id, context_limit) values (${BIG}, ${TENANT}, 'big', 200000)`);
  await d.execute(sql`
    insert into messages (conversation_id, seq, role, content, tokens)
    select ${BIG}, s, 'user', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'message ' || s)), 3
      from generate_series(1, ${SIZE + CHUNK}) s`);
  await d.execute(sql`
    insert into compaction_jobs (id, tenant_id, conversation_id, status, trigger) values (${JOB}, ${TENANT}, ${BIG}, 'committing', 'api')`);
  await d.execute(sql`
    insert into compaction_chunks (job_id, idx, seqs, source_tokens, output_budget)
    select ${JOB}, i, array(select generate_series(i * ${CHUNK} + 1, i * ${CHUNK} + ${CHUNK}))::bigint[], 300, 50
      from generate_series(0, ${SIZE / CHUNK - 1}) i`);
  // each chunk's level-0 batch, as the commit inserts them just before the move
  await d.execute(sql`
    insert into batches (conversation_id, job_id, level, summary, seqs, source_messages, source_tokens, summary_tokens, model)
    select ${BIG}, job_id, 0, 'summary ' || idx, seqs, cardinality(seqs), source_tokens, 2, 'm' from compaction_chunks where job_id = ${JOB}`);
});
afterAll(async () => {
  await db?.drop();
});

interface PlanNode {
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

/** Rows produced by every node of the plan, each counted once per loop. */
function rowVisits(node: PlanNode): number {
  return node['Actual Rows'] * node['Actual Loops'] + (node.Plans ?? []).reduce((sum, child) => sum + rowVisits(child), 0);
}

/** Runs `statement` under EXPLAIN ANALYZE with only nested loops allowed, and rolls it back. */
async function visitsOf(statement: SQL): Promise<number> {
  let visits = 0;
  await db.db
    .transaction(async (tx) => {
      await tx.execute(sql`set local enable_hashjoin = off`);
      await tx.execute(sql`set local enable_mergejoin = off`);
      const [row] = await tx.execute<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(sql`explain (analyze, format json) ${statement}`);
      visits = rowVisits(row!['QUERY PLAN'][0]!.Plan);
      tx.rollback();
    })
    .catch((error: unknown) => {
      if (!(error instanceof TransactionRollbackError)) throw error;
    });
  return visits;
}

describe('the commit statements on a conversation the statistics have not seen', () => {
  it('the stale-snapshot check probes each planned seq once', async () => {
    const visits = await visitsOf(activeTotalsForCommitSql(BIG, JOB, [SIZE + 1, SIZE + 2]));
    expect(visits).toBeGreaterThan(SIZE);
    expect(visits).toBeLessThan(20 * SIZE);
  });

  it('the archive move probes each moving seq once and removes by primary key', async () => {
    const move = moveToArchiveSql({
      conversationId: BIG,
      jobId: JOB,
      rewrites: [{ seq: SIZE + 1, reason: 'masked', content: [{ type: 'text', text: 'masked' }], tokens: 1 }],
      supersededClipSeq: SIZE + 2,
    });
    const visits = await visitsOf(move);
    expect(visits).toBeGreaterThan(SIZE);
    expect(visits).toBeLessThan(20 * SIZE);
  });
});

describe('archiveMessages, which looks its rows up the same way', () => {
  it('copies and removes the listed seqs only', async () => {
    const seqs = [SIZE + 10, SIZE + 11, SIZE + 12];
    const moved = await archiveMessages(db.db, { conversationId: BIG, jobId: JOB, reason: 'summarized', seqs, remove: true });
    expect(moved).toBe(3);
    const [left] = await db.db.execute<{ n: number }>(
      sql`select count(*)::int as n from messages where conversation_id = ${BIG} and seq = any(${sql.param(seqs.map(String))}::bigint[])`,
    );
    expect(left!.n).toBe(0);
  });
});
