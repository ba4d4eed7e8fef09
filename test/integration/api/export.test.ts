import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../harness/transcripts.js';
import { streamHistory } from '../../../src/db/repos/archive.js';
import { archiveMessages, insertBatches, insertClipArchiveMessage } from '../../../src/db/repos/compaction-writes.js';
import { compactionJobs } from '../../../src/db/schema.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';
import {
  type ArchiveScenario,
  conversationByExternalId,
  createWithMessages,
  MASK_2,
  seedArchiveScenario,
} from '../../helpers/archive-seed.js';

interface Line {
  seq: number;
  role: string;
  kind: 'message' | 'clip_archive';
  content: Array<Record<string, unknown>>;
  archived: boolean;
  reason: string | null;
  batchId: string | null;
}

let t: TestApi;
let s: ArchiveScenario;
beforeAll(async () => {
  t = await createTestApi();
  s = await seedArchiveScenario(t, 'export-conv');
});
afterAll(async () => {
  await t?.close();
});

async function exportLines(id: string, query = ''): Promise<Line[]> {
  const res = await t.app.inject({ method: 'GET', url: `/v1/conversations/${id}/export${query}`, headers: t.auth() });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
  expect(res.body.endsWith('\n')).toBe(true);
  return res.body
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Line);
}

const appended = (line: Line) => ({ seq: line.seq, role: line.role, kind: line.kind, content: line.content });

describe('GET /v1/conversations/:id/export', () => {
  it('streams every appended message once, as appended, in seq order, with the clip-archive after its seq', async () => {
    const lines = await exportLines('export-conv');
    const messages = lines.filter((l) => l.kind === 'message');
    expect(messages.map((l) => l.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    for (const line of messages) expect(line.content).toEqual(s.before.get(line.seq)!.content);

    // one clip-archive (the first compaction's was superseded), right after the original sharing its seq
    const clips = lines.flatMap((l, i) => (l.kind === 'clip_archive' ? [i] : []));
    expect(clips).toHaveLength(1);
    expect(lines[clips[0]!]!.seq).toBe(s.second.clipSeq);
    expect(lines[clips[0]! - 1]).toMatchObject({ seq: s.second.clipSeq, kind: 'message' });
    expect(lines[clips[0]!]).toMatchObject({ archived: false, reason: null, batchId: null, role: 'system' });
  });

  it('marks where each original lives now: summarized (with its batch), masked, or active', async () => {
    const bySeq = new Map((await exportLines('export-conv', '?clipArchive=false')).map((l) => [l.seq, l]));
    expect(bySeq.get(1)).toMatchObject({ archived: true, reason: 'summarized', batchId: s.ids.A });
    expect(bySeq.get(30)).toMatchObject({ archived: true, reason: 'summarized', batchId: s.ids.B });
    // masked by the first compaction, then summarized by the second: its original, and the batch that summarized it
    expect(bySeq.get(40)).toMatchObject({ archived: true, reason: 'summarized', batchId: s.ids.C });
    expect(bySeq.get(49)).toMatchObject({ archived: true, reason: 'summarized', batchId: s.ids.D });
    // masked and still active in its masked form: the export carries the original
    expect(bySeq.get(52)).toMatchObject({ archived: true, reason: 'masked', batchId: null });
    expect(JSON.stringify(bySeq.get(52)!.content)).not.toContain(MASK_2);
    for (const seq of [47, 48, 51, 53, 60]) expect(bySeq.get(seq)).toMatchObject({ archived: false, reason: null, batchId: null });
  });

  it('is the same history as an uncompacted copy of the conversation (compaction loses nothing)', async () => {
    const [source] = loadRealTranscript('spotter-claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl').conversations;
    await createWithMessages(t, 'export-copy', source!.messages.slice(0, 60));
    const copy = await exportLines('export-copy');
    expect(copy.every((l) => !l.archived && l.reason === null && l.batchId === null && l.kind === 'message')).toBe(true);
    expect((await exportLines('export-conv', '?clipArchive=false')).map(appended)).toEqual(copy.map(appended));
  });

  it('a compaction committing between the slices of a page moves rows, and the export still carries each original once', async () => {
    const [source] = loadRealTranscript('spotter-claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl').conversations;
    await createWithMessages(t, 'export-moving', source!.messages.slice(0, 40));
    const conversation = await conversationByExternalId(t.db.db, 'export-moving');
    const before = (await exportLines('export-moving', '?clipArchive=false')).map(appended);
    const seen: Array<ReturnType<typeof appended>> = [];
    let slices = 0;
    // slices of one row: the plan of the whole page is read before any of its content
    for await (const page of streamHistory(t.db.db, conversation.id, { pageSize: 500, maxPageBytes: 1, includeClipArchive: false })) {
      if (++slices === 1) {
        // after the plan: seqs 11-20 summarized (gone from messages), 21-30 masked in place
        await t.db.db.transaction(async (tx) => {
          const [job] = await tx
            .insert(compactionJobs)
            .values({ tenantId: conversation.tenantId, conversationId: conversation.id, trigger: 'api', status: 'completed' })
            .returning();
          const summarized = Array.from({ length: 10 }, (_, i) => 11 + i);
          const masked = Array.from({ length: 10 }, (_, i) => 21 + i);
          await archiveMessages(tx, {
            conversationId: conversation.id,
            jobId: job!.id,
            reason: 'summarized',
            seqs: summarized,
            remove: true,
          });
          await archiveMessages(tx, { conversationId: conversation.id, jobId: job!.id, reason: 'masked', seqs: masked, remove: false });
          await tx.execute(
            sql`update messages set content = '[{"type":"text","text":"[masked]"}]' where conversation_id = ${conversation.id} and seq = any(${sql.param(masked.map(String))}::bigint[])`,
          );
        });
      }
      seen.push(
        ...page.map((row) => ({ seq: row.seq, role: row.role, kind: row.kind, content: row.content as unknown as Line['content'] })),
      );
    }
    expect(slices).toBe(40);
    expect(seen).toEqual(before);
  });

  it("answers 404 for another tenant's conversation and 400 for a bad flag", async () => {
    const other = await t.app.inject({ method: 'GET', url: '/v1/conversations/export-conv/export', headers: t.auth(t.otherKey) });
    expect(other.statusCode).toBe(404);
    const bad = await t.app.inject({ method: 'GET', url: '/v1/conversations/export-conv/export?clipArchive=maybe', headers: t.auth() });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].field).toBe('querystring.clipArchive');
  });
});

describe('export of a 20k-message conversation', () => {
  const TOTAL = 20_000;
  const FILLER = 'the quick brown fox jumps over the lazy dog and keeps on running '.repeat(50);

  /** 20k messages of ~3 KB: 1-15000 summarized in 30 batches, every 10th of 15001-16000 masked, a clip-archive at 1. */
  async function seedLarge(id: string) {
    await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id } });
    const conversation = await conversationByExternalId(t.db.db, id);
    await t.db.db.execute(sql`
      insert into messages (conversation_id, seq, role, kind, content, tokens)
      select ${conversation.id}, g, case when g % 2 = 1 then 'user' else 'assistant' end, 'message',
             jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'message ' || g || ' ' || ${FILLER})), 700
        from generate_series(1, ${TOTAL}) g`);
    await t.db.db.transaction(async (tx) => {
      const [job] = await tx
        .insert(compactionJobs)
        .values({ tenantId: conversation.tenantId, conversationId: conversation.id, trigger: 'api', status: 'completed' })
        .returning();
      const chunks = Array.from({ length: 30 }, (_, k) => Array.from({ length: 500 }, (_, i) => k * 500 + i + 1));
      const batchIds = await insertBatches(
        tx,
        chunks.map((seqs) => ({
          conversationId: conversation.id,
          jobId: job!.id,
          level: 0,
          summary: 's',
          seqs,
          sourceMessages: 500,
          sourceTokens: 1,
          summaryTokens: 1,
          model: 'm',
        })),
      );
      const seqs = chunks.flat();
      await archiveMessages(tx, {
        conversationId: conversation.id,
        jobId: job!.id,
        reason: 'summarized',
        seqs,
        batchIds: seqs.map((seq) => batchIds[Math.floor((seq - 1) / 500)]!.id),
        remove: true,
      });
      const masked = Array.from({ length: 100 }, (_, i) => 15_010 + i * 10);
      await archiveMessages(tx, { conversationId: conversation.id, jobId: job!.id, reason: 'masked', seqs: masked, remove: false });
      await tx.execute(
        sql`update messages set content = '[{"type":"text","text":"[masked]"}]' where conversation_id = ${conversation.id} and seq = any(${sql.param(masked.map(String))}::bigint[])`,
      );
      await insertClipArchiveMessage(tx, {
        conversationId: conversation.id,
        seq: 1,
        role: 'system',
        content: [{ type: 'text', text: 'summaries' }],
        tokens: 1,
      });
    });
  }

  it('streams in many chunks, in seq order, and never holds more than a few pages', async () => {
    await seedLarge('export-big');
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // Buffers live outside the JS heap: count both.
    const used = () => {
      gc();
      const { heapUsed, arrayBuffers } = process.memoryUsage();
      return heapUsed + arrayBuffers;
    };
    const baseline = used();

    const res = await t.app.inject({ method: 'GET', url: '/v1/conversations/export-big/export', headers: t.auth(), payloadAsStream: true });
    expect(res.statusCode).toBe(200);
    let chunks = 0;
    let bytes = 0;
    let pending = '';
    let expectedSeq = 1;
    let clipLines = 0;
    let maxRetained = 0;
    // sampled by bytes, not chunks: a full collection costs tens of ms and chunks are ~64 KB
    let nextSample = 0;
    for await (const chunk of res.stream()) {
      chunks++;
      bytes += (chunk as Buffer).length;
      const text = pending + (chunk as Buffer).toString('utf8');
      const cut = text.lastIndexOf('\n');
      pending = text.slice(cut + 1);
      for (const raw of text.slice(0, cut).split('\n')) {
        const line = JSON.parse(raw) as Line;
        if (line.kind === 'clip_archive') {
          clipLines++;
          expect(line.seq).toBe(1);
          continue;
        }
        expect(line.seq).toBe(expectedSeq);
        expect((line.content[0] as { text: string }).text.startsWith(`message ${line.seq} `)).toBe(true);
        expect(line.reason).toBe(
          line.seq <= 15_000 ? 'summarized' : line.seq >= 15_010 && line.seq <= 16_000 && line.seq % 10 === 0 ? 'masked' : null,
        );
        expectedSeq++;
      }
      // Mid-stream: collect garbage and see what is still held (the server's page, our chunk).
      if (bytes >= nextSample) {
        nextSample += 4_000_000;
        maxRetained = Math.max(maxRetained, used() - baseline);
      }
    }
    expect(pending).toBe('');
    expect(expectedSeq - 1).toBe(TOTAL);
    expect(clipLines).toBe(1);
    expect(bytes).toBeGreaterThan(60_000_000);
    expect(chunks).toBeGreaterThanOrEqual(TOTAL / 500);
    // Loading the export whole holds at least its text (here ~2x bytes with the rows); the stream holds a few pages.
    expect(maxRetained).toBeLessThan(bytes / 2);
  }, 180_000);
});
