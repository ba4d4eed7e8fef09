import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../harness/transcripts.js';
import { compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * The archive reads against what the real workflow writes: a real session is masked, then
 * summarized (so some originals are archived twice), and every read must still return the
 * messages exactly as they were appended.
 */

interface Line {
  seq: number;
  role: string;
  kind: string;
  content: Array<Record<string, unknown>>;
  archived: boolean;
  reason: string | null;
  batchId: string | null;
}
interface Batch {
  id: string;
  jobId: string;
  level: number;
  seqs: number[];
  supersededBy: string | null;
}

let stack: Stack;
beforeAll(async () => {
  stack = await createStack();
});
afterAll(async () => {
  await stack?.close();
});

const get = (url: string) => stack.app.inject({ method: 'GET', url, headers: stack.auth() });

async function exportLines(id: string, query = ''): Promise<Line[]> {
  const res = await get(`/v1/conversations/${id}/export${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.body
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Line);
}

async function batchOriginals(id: string): Promise<Line[]> {
  const out: Line[] = [];
  let after: number | null = 0;
  while (after !== null) {
    const res = await get(`/v1/batches/${id}/messages?after=${after}&limit=50`);
    expect(res.statusCode, res.body).toBe(200);
    out.push(...res.json().messages);
    after = res.json().nextAfter;
  }
  return out;
}

const appended = (line: Line) => ({ seq: line.seq, role: line.role, kind: line.kind, content: line.content });

describe('archive reads after real compactions of a real session', () => {
  it('batches, originals, export and search all return the messages as appended', async () => {
    const session = loadRealTranscript('spotter-claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl').conversations[0]!;
    await seedConversation(stack, 'reads', session.messages, { policy: { auto: false } });
    const before = await exportLines('reads');
    const original = new Map(before.map((line) => [line.seq, line]));

    const masking = await waitForJob(stack, (await compact(stack, 'reads', { strategy: 'mask' })).id);
    expect(masking.status, JSON.stringify(masking.error)).toBe('completed');
    // after masking: the active rows are placeholders, the export still carries the originals
    const masked = (await exportLines('reads')).filter((l) => l.reason === 'masked');
    expect(masked).toHaveLength(masking.result.rewrites.masked);
    expect(masked.length).toBeGreaterThan(0);
    expect(masked.every((l) => l.archived && l.batchId === null)).toBe(true);
    expect(masked.map(appended)).toEqual(masked.map((l) => appended(original.get(l.seq)!)));
    const summarizing = await waitForJob(stack, (await compact(stack, 'reads', { strategy: 'summarize' })).id);
    expect(summarizing.status, JSON.stringify(summarizing.error)).toBe('completed');

    // export: the same history, each message once, as appended; the clip-archive where the job put it
    const after = await exportLines('reads');
    const messages = after.filter((l) => l.kind === 'message');
    expect(messages.map(appended)).toEqual(before.map(appended));
    expect(after.filter((l) => l.kind === 'clip_archive').map((l) => l.seq)).toEqual([summarizing.result.clipArchiveSeq]);
    const summarized = messages.filter((l) => l.reason === 'summarized');
    expect(summarized).toHaveLength(summarizing.result.messagesArchived);
    // masked, then summarized: archived twice, exported once, as appended, with its batch
    const maskedThenSummarized = summarized.filter((l) => masked.some((m) => m.seq === l.seq));
    expect(maskedThenSummarized.length).toBeGreaterThan(0);
    expect(maskedThenSummarized.every((l) => l.batchId !== null)).toBe(true);

    // batches: the job's, covering exactly the summarized seqs, originals as appended
    const batches = (await get('/v1/conversations/reads/batches?limit=200')).json().batches as Batch[];
    expect(new Set(batches.map((b) => b.id))).toEqual(new Set(summarizing.result.batchIds));
    const level0 = batches.filter((b) => b.level === 0);
    expect(level0.flatMap((b) => b.seqs).sort((a, b) => a - b)).toEqual(summarized.map((l) => l.seq));
    for (const batch of level0) {
      const originals = await batchOriginals(batch.id);
      expect(originals.map((m) => m.seq)).toEqual([...batch.seqs].sort((a, b) => a - b));
      for (const m of originals) {
        expect(m.content).toEqual(original.get(m.seq)!.content);
        expect(m.batchId).toBe(batch.id);
      }
    }

    // search: a word of an archived tool result finds that message, and only archived ones come back
    const archivedSeqs = new Set(messages.filter((l) => l.archived).map((l) => l.seq));
    // what the index holds: the text of blocks and the string values of tool inputs (no keys, ids or block types)
    const searchable = (value: unknown, key = ''): string[] =>
      typeof value === 'string'
        ? ['id', 'type', 'tool_use_id'].includes(key)
          ? []
          : [value]
        : Array.isArray(value)
          ? value.flatMap((item) => searchable(item))
          : value !== null && typeof value === 'object'
            ? Object.entries(value).flatMap(([k, v]) => searchable(v, k))
            : [];
    const target = summarized.find((l) => /\b[a-z]{9,}\b/.test(searchable(l.content).join('\n')))!;
    const word = /\b([a-z]{9,})\b/.exec(searchable(target.content).join('\n'))![1]!;
    const hits = (await get(`/v1/conversations/reads/archive/search?q=${word}&limit=100`)).json().hits as Array<{ seq: number }>;
    expect(hits.map((h) => h.seq)).toContain(target.seq);
    expect(hits.every((h) => archivedSeqs.has(h.seq))).toBe(true);
  });
});
