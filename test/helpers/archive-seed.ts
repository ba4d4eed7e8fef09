import { and, eq, inArray } from 'drizzle-orm';

import { loadRealTranscript } from '../../harness/transcripts.js';
import type { Block, NormalizedMessage } from '../../src/compaction/types.js';
import type { Db } from '../../src/db/client.js';
import {
  archiveMessages,
  insertBatches,
  insertClipArchiveMessage,
  moveToArchive,
  supersedeBatches,
} from '../../src/db/repos/compaction-writes.js';
import { indexArchiveForRecall } from '../../src/db/repos/recall-index.js';
import { batches, compactionJobs, conversations, messages } from '../../src/db/schema.js';
import type { TestApi } from './api.js';

/**
 * Writes the rows a completed compaction leaves behind, with the workflow's own repository
 * writes and in the order of its commit (batches, summarized originals, rewrites, the
 * clip-archive swap), one transaction per compaction, so archive reads can be tested
 * against exact, known coverage.
 */

export type ConversationRow = typeof conversations.$inferSelect;

export async function conversationByExternalId(db: Db, externalId: string): Promise<ConversationRow> {
  const [row] = await db.select().from(conversations).where(eq(conversations.externalId, externalId));
  if (!row) throw new Error(`conversation ${externalId} not found`);
  return row;
}

export interface SimulatedCompaction {
  /** level-0 batches: their seqs leave the active history as `summarized` */
  chunks: Array<{ seqs: number[]; summary: string }>;
  /** kept messages rewritten in place; the original is archived first */
  rewrites?: Array<{ seq: number; reason: 'masked' | 'truncated'; content: Block[] }>;
  /** one re-summary absorbing earlier batches (by id) and/or this compaction's chunks (by index) */
  resummary?: { batchIds?: string[]; chunkIndexes?: number[]; summary: string };
}

export interface SimulatedResult {
  jobId: string;
  /** one per chunk, same order */
  batchIds: string[];
  resummaryId: string | null;
  clipSeq: number | null;
}

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

/**
 * Writes a compaction's result as the commit does, then (unless `indexAfterCommit` is false:
 * a test of the indexer or of the unindexed backlog) its search index as the worker does after
 * the commit.
 */
export async function simulateCompaction(
  db: Db,
  conversation: ConversationRow,
  spec: SimulatedCompaction,
  options: { indexAfterCommit?: boolean } = {},
): Promise<SimulatedResult> {
  const result = await commitSimulated(db, conversation, spec);
  if (options.indexAfterCommit ?? true) while ((await indexArchiveForRecall(db, conversation.id, { limit: 200 })).more);
  return result;
}

async function commitSimulated(db: Db, conversation: ConversationRow, spec: SimulatedCompaction): Promise<SimulatedResult> {
  return db.transaction(async (tx) => {
    const [job] = await tx
      .insert(compactionJobs)
      .values({
        tenantId: conversation.tenantId,
        conversationId: conversation.id,
        status: 'completed',
        trigger: 'api',
        finishedAt: new Date(),
      })
      .returning({ id: compactionJobs.id });
    const jobId = job!.id;
    const batchRow = (level: number, seqs: number[], summary: string) => ({
      conversationId: conversation.id,
      jobId,
      level,
      summary,
      seqs,
      sourceMessages: seqs.length,
      sourceTokens: seqs.length * 100,
      summaryTokens: words(summary),
      model: 'local-extractive',
    });
    const batchIds = (
      await insertBatches(
        tx,
        spec.chunks.map((c) => batchRow(0, c.seqs, c.summary)),
      )
    ).map((r) => r.id);

    let resummaryId: string | null = null;
    if (spec.resummary) {
      const absorbedIds = [...(spec.resummary.batchIds ?? []), ...(spec.resummary.chunkIndexes ?? []).map((i) => batchIds[i]!)];
      const absorbed = await tx.select().from(batches).where(inArray(batches.id, absorbedIds));
      const seqs = [...new Set(absorbed.flatMap((b) => b.seqs))].sort((a, b) => a - b);
      const level = Math.max(...absorbed.map((b) => b.level)) + 1;
      const [row] = await insertBatches(tx, [batchRow(level, seqs, spec.resummary.summary)]);
      resummaryId = row!.id;
      await supersedeBatches(tx, absorbedIds, resummaryId);
    }

    const compressed = spec.chunks.flatMap((c) => c.seqs.map((seq) => ({ seq })));
    // the chunks' batches (level 0 of this job) name the summarized seqs, as in a real commit
    await moveToArchive(tx, {
      conversationId: conversation.id,
      jobId,
      rewrites: (spec.rewrites ?? []).map((r) => ({ seq: r.seq, reason: r.reason, content: r.content, tokens: 10 })),
      supersededClipSeq: null,
    });

    let clipSeq: number | null = null;
    if (compressed.length > 0) {
      const previous = await tx
        .select({ seq: messages.seq })
        .from(messages)
        .where(and(eq(messages.conversationId, conversation.id), eq(messages.kind, 'clip_archive')));
      const previousSeqs = previous.map((p) => p.seq);
      if (previousSeqs.length > 0) {
        await archiveMessages(tx, { conversationId: conversation.id, jobId, reason: 'superseded_clip', seqs: previousSeqs, remove: true });
      }
      clipSeq = Math.min(...compressed.map((c) => c.seq), ...previousSeqs);
      const summaries = spec.chunks.map((c) => c.summary).join('\n');
      await insertClipArchiveMessage(tx, {
        conversationId: conversation.id,
        seq: clipSeq,
        role: 'system',
        content: [{ type: 'text', text: `<archived-history>\n${summaries}\n</archived-history>` }],
        tokens: words(summaries),
      });
    }
    return { jobId, batchIds, resummaryId, clipSeq };
  });
}

/** A kept tool result as Tier 2 leaves it: same ids, output replaced by a placeholder. */
export function maskBlocks(content: readonly Block[], placeholder: string): Block[] {
  return content.map((block) => (block.type === 'tool_result' ? { ...block, content: placeholder } : block));
}

export interface StoredMessage {
  seq: number;
  role: string;
  kind: string;
  content: Block[];
}

/** The active history through the API, every page. */
export async function readActive(t: TestApi, id: string): Promise<StoredMessage[]> {
  const out: StoredMessage[] = [];
  let after: number | null = 0;
  while (after !== null) {
    const res = await t.app.inject({ method: 'GET', url: `/v1/conversations/${id}/messages?after=${after}&limit=1000`, headers: t.auth() });
    const page = res.json() as { messages: StoredMessage[]; nextAfter: number | null };
    out.push(...page.messages);
    after = page.nextAfter;
  }
  return out;
}

export async function createWithMessages(t: TestApi, id: string, messages: readonly NormalizedMessage[]): Promise<void> {
  const created = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id } });
  if (created.statusCode !== 201) throw new Error(`create ${id}: ${created.body}`);
  const appended = await t.app.inject({
    method: 'POST',
    url: `/v1/conversations/${id}/messages`,
    headers: t.auth(),
    payload: { messages },
  });
  if (appended.statusCode !== 201) throw new Error(`append ${id}: ${appended.body}`);
}

export interface ArchiveScenario {
  conversation: ConversationRow;
  /** the active history before any compaction, by seq */
  before: Map<number, StoredMessage>;
  first: SimulatedResult;
  second: SimulatedResult;
  /** batch ids by name: A 1-21, B 22-34 (job 1); C 35-44, D 45-46,49-50, R = re-summary of A+B (job 2) */
  ids: { A: string; B: string; C: string; D: string; R: string };
}

export const MASK_1 = '[tool output masked by compaction 1]';
export const MASK_2 = '[tool output masked by compaction 2]';

/**
 * The first 60 messages of a real Claude Code session, then two compactions: the first
 * summarizes 1-21 and 22-34 and masks the tool result at 40; the second summarizes 35-44
 * (including 40's masked version) and 45-46,49-50 (47-48 kept), masks 52, and re-summarizes
 * the first two batches into a level-1 batch.
 */
export async function seedArchiveScenario(t: TestApi, id: string): Promise<ArchiveScenario> {
  const [source] = loadRealTranscript('spotter-claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl').conversations;
  await createWithMessages(t, id, source!.messages.slice(0, 60));
  const before = new Map((await readActive(t, id)).map((m) => [m.seq, m]));
  const conversation = await conversationByExternalId(t.db.db, id);
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const first = await simulateCompaction(t.db.db, conversation, {
    chunks: [
      { seqs: range(1, 21), summary: 'The agent inspected bead spotter-4te and explored the telemetry files.' },
      { seqs: range(22, 34), summary: 'The agent looked up opentelemetry_bandit setup and added the dependency.' },
    ],
    rewrites: [{ seq: 40, reason: 'masked', content: maskBlocks(before.get(40)!.content, MASK_1) }],
  });
  const [A, B] = first.batchIds as [string, string];
  const second = await simulateCompaction(t.db.db, conversation, {
    chunks: [
      { seqs: range(35, 44), summary: 'The agent wired the propagator setup into the application.' },
      { seqs: [45, 46, 49, 50], summary: 'The agent checked how the propagator modules fit together.' },
    ],
    rewrites: [{ seq: 52, reason: 'masked', content: maskBlocks(before.get(52)!.content, MASK_2) }],
    resummary: { batchIds: [A, B], summary: 'Setup of OpenTelemetry for spotter-4te: inspection, docs, dependency.' },
  });
  const [C, D] = second.batchIds as [string, string];
  return { conversation, before, first, second, ids: { A, B, C, D, R: second.resummaryId! } };
}
