import { and, desc, eq, gt, isNull, ne, sql } from 'drizzle-orm';

import type { DbOrTx } from '../client.js';
import { batches, compactionJobs, conversations, type JobStatus } from '../schema.js';
import type { JobRow } from './jobs.js';

/**
 * The writes of a revert (SPEC §5.8): everything one compaction did, undone set-based.
 * The caller holds the conversation lock inside one transaction.
 */

/** Completed, not reverted jobs of the conversation that finished after `job`, newest first. */
export async function completedJobsAfter(db: DbOrTx, job: Pick<JobRow, 'id' | 'conversationId' | 'finishedAt'>): Promise<JobRow[]> {
  if (!job.finishedAt) return [];
  return db
    .select()
    .from(compactionJobs)
    .where(
      and(
        eq(compactionJobs.conversationId, job.conversationId),
        eq(compactionJobs.status, 'completed' satisfies JobStatus),
        ne(compactionJobs.id, job.id),
        gt(compactionJobs.finishedAt, job.finishedAt),
        isNull(sql`${compactionJobs.result} -> 'revertedAt'`),
      ),
    )
    .orderBy(desc(compactionJobs.finishedAt));
}

/** Removes the clip-archive message the job inserted (it sits where an original will return). */
export async function deleteClipArchive(db: DbOrTx, conversationId: string, seq: number): Promise<void> {
  await db.execute(sql`delete from messages where conversation_id = ${conversationId} and seq = ${seq} and kind = 'clip_archive'`);
}

/** Puts back the rows the job removed (summarized originals and the clip-archive it superseded). */
export async function restoreRemovedMessages(db: DbOrTx, jobId: string): Promise<number> {
  const rows = await db.execute(sql`
    insert into messages (id, conversation_id, seq, role, kind, content, name, tokens, tool_use_ids, tool_result_ids, usage, metadata, created_at)
    select id, conversation_id, seq, role, kind, content, name, tokens, tool_use_ids, tool_result_ids, usage, metadata, created_at
      from archived_messages where job_id = ${jobId} and reason in ('summarized', 'superseded_clip')`);
  return rows.count;
}

/** Gives rewritten (masked/truncated) messages their original content back. */
export async function restoreRewrittenMessages(db: DbOrTx, jobId: string): Promise<number> {
  const rows = await db.execute(sql`
    update messages m set content = a.content, tokens = a.tokens
      from archived_messages a
     where a.job_id = ${jobId} and a.reason in ('masked', 'truncated')
       and m.conversation_id = a.conversation_id and m.seq = a.seq`);
  return rows.count;
}

export async function deleteArchivedByJob(db: DbOrTx, jobId: string): Promise<void> {
  await db.execute(sql`delete from archived_messages where job_id = ${jobId}`);
}

/** Drops the job's batches and makes the batches its re-summary absorbed live again. */
export async function deleteBatchesOfJob(db: DbOrTx, jobId: string): Promise<void> {
  await db.execute(sql`
    update batches set superseded_by = null
     where superseded_by in (select id from batches where job_id = ${jobId})`);
  await db.delete(batches).where(eq(batches.jobId, jobId));
}

/** Watermark of the compaction that is latest once `excludingJobId` is reverted. */
export async function previousWatermark(db: DbOrTx, conversationId: string, excludingJobId: string): Promise<number | null> {
  const [row] = await db.execute<{ watermark: string | null }>(sql`
    select watermark from compaction_jobs
     where conversation_id = ${conversationId} and status = 'completed' and id <> ${excludingJobId} and trigger <> 'consolidate'
       and result -> 'revertedAt' is null
     order by finished_at desc limit 1`);
  return row?.watermark == null ? null : Number(row.watermark);
}

/**
 * The conversation's row once the jobs are undone: its active totals, a new version and, when
 * a compaction (not a consolidation) was reverted, one compaction less, the cooldown watermark
 * of the compaction that is latest again, and auto compaction paused until a new message
 * arrives (a revert is a deliberate choice: the same history is not compacted again by itself).
 */
export async function settleRevertedConversation(
  db: DbOrTx,
  conversationId: string,
  totals: { tokens: number; messages: number },
  compaction: { lastCompactedSeq: number | null } | null,
): Promise<void> {
  await db
    .update(conversations)
    .set({
      activeTokens: totals.tokens,
      messageCount: totals.messages,
      ...(compaction
        ? {
            compactionCount: sql`greatest(${conversations.compactionCount} - 1, 0)`,
            lastCompactedSeq: compaction.lastCompactedSeq,
            autoPausedUntilSeq: sql`${conversations.nextSeq} - 1`,
          }
        : {}),
      version: sql`${conversations.version} + 1`,
      updatedAt: sql`now()`,
    })
    .where(eq(conversations.id, conversationId));
}

export async function markReverted(db: DbOrTx, jobId: string): Promise<void> {
  await db.execute(sql`
    update compaction_jobs set result = coalesce(result, '{}'::jsonb) || jsonb_build_object('revertedAt', now()), updated_at = now()
     where id = ${jobId}`);
}
