import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../harness/transcripts.js';
import { messageFromExportLine } from '../../../src/client/export-lines.js';
import type { ExportLine } from '../../../src/client/types.js';
import type { NormalizedMessage } from '../../../src/compaction/types.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';
import { conversationByExternalId, maskBlocks, simulateCompaction } from '../../helpers/archive-seed.js';

/**
 * Issue 34 item 2: the export and a batch's originals carry each message's metadata (the meta
 * flag, the pin, the importer's fields, the usage it was appended with), so an export
 * re-imports as the same conversation: import → compact → export → import as a new
 * conversation → export again gives the same messages, metadata and pins.
 */

let t: TestApi;
beforeAll(async () => {
  t = await createTestApi();
});
afterAll(async () => {
  await t?.close();
});

const HARNESS_TURN = '<bash-input>npm test</bash-input>';
const USER_TURN_WITH_OWN_METADATA = {
  role: 'user',
  content: [{ type: 'text', text: 'Ship it once the tests pass.' }],
  metadata: { meta: false, ticket: 'ACME-7' },
};

/** A Claude Code session as the importer reads it (uuids, timestamps, models, usage, meta turns), a pin and two turns of our own. */
function importedSession(): NormalizedMessage[] {
  const [session] = loadRealTranscript('spotter-claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl').conversations;
  const messages = session!.messages.slice(0, 70).map((m, i) => (i === 49 ? { ...m, pinned: true } : m));
  return [...messages, { role: 'user', content: [{ type: 'text', text: HARNESS_TURN }] }, USER_TURN_WITH_OWN_METADATA as NormalizedMessage];
}

async function append(id: string, messages: readonly unknown[]): Promise<void> {
  const created = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id } });
  expect(created.statusCode, created.body).toBe(201);
  const appended = await t.app.inject({
    method: 'POST',
    url: `/v1/conversations/${id}/messages`,
    headers: t.auth(),
    payload: { messages, autoCompact: false },
  });
  expect(appended.statusCode, appended.body).toBe(201);
}

async function exportLines(id: string): Promise<ExportLine[]> {
  const res = await t.app.inject({ method: 'GET', url: `/v1/conversations/${id}/export`, headers: t.auth() });
  expect(res.statusCode, res.body).toBe(200);
  return res.body
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as ExportLine);
}

/** What a re-import must keep: everything of an appended message but where it lives now. */
const appended = (line: ExportLine) => {
  const { archived: _archived, reason: _reason, batchId: _batchId, ...rest } = line;
  return rest;
};

describe('an export re-imports as the same conversation', () => {
  it('import, compact, export, import the export, export again: the same messages, metadata and pins', async () => {
    const session = importedSession();
    await append('reimport-source', session);
    const conversation = await conversationByExternalId(t.db.db, 'reimport-source');
    // a compaction summarized 1-30 and masked a tool result it kept; a pin set afterwards on the masked message
    const masked = session.findIndex((m, i) => i >= 34 && i < 45 && m.content.some((b) => b.type === 'tool_result')) + 1;
    expect(masked).toBeGreaterThan(34);
    const stored = await t.app.inject({
      method: 'GET',
      url: `/v1/conversations/reimport-source/messages?after=${masked - 1}&limit=1`,
      headers: t.auth(),
    });
    const compaction = await simulateCompaction(t.db.db, conversation, {
      chunks: [{ seqs: Array.from({ length: 30 }, (_, i) => i + 1), summary: 'the first thirty turns' }],
      rewrites: [{ seq: masked, reason: 'masked', content: maskBlocks(stored.json().messages[0].content, '[masked]') }],
    });
    const pin = await t.app.inject({ method: 'PUT', url: `/v1/conversations/reimport-source/messages/${masked}/pin`, headers: t.auth() });
    expect(pin.statusCode, pin.body).toBe(200);

    const first = await exportLines('reimport-source');
    const originals = first.filter((line) => line.kind === 'message');
    expect(originals.map((line) => line.seq)).toEqual(session.map((_, i) => i + 1));
    // every importer field came through, archived or not
    originals.forEach((line, i) => {
      const { meta: _flag, ...expected } = session[i]!.metadata ?? {};
      expect(line.metadata ?? {}).toMatchObject(expected);
      expect(line.usage).toEqual(session[i]!.usage);
    });
    const bySeq = new Map(originals.map((line) => [line.seq, line]));
    expect(bySeq.get(1)).toMatchObject({ archived: true, reason: 'summarized', batchId: compaction.batchIds[0], pinned: false });
    expect(bySeq.get(masked)).toMatchObject({ archived: true, reason: 'masked', pinned: true });
    expect(JSON.stringify(bySeq.get(masked)!.content)).not.toContain('[masked]');
    expect(bySeq.get(50)).toMatchObject({ archived: false, pinned: true });
    // a harness wrapper is a meta turn; a user's own metadata is kept as sent
    expect(bySeq.get(71)).toMatchObject({ meta: true, metadata: { meta: true } });
    expect(bySeq.get(72)).toMatchObject({ metadata: { meta: false, ticket: 'ACME-7' } });
    expect(bySeq.get(72)).not.toHaveProperty('meta');
    const metaSeqs = originals.filter((line) => line.meta === true).map((line) => line.seq);
    expect(metaSeqs.length).toBeGreaterThan(1);
    expect(metaSeqs.filter((seq) => seq <= 30).length).toBeGreaterThan(0);

    const messages = first.flatMap((line) => messageFromExportLine(line) ?? []);
    expect(messages).toHaveLength(session.length);
    await append('reimport-copy', messages);
    const second = await exportLines('reimport-copy');
    expect(second.every((line) => !line.archived && line.kind === 'message')).toBe(true);
    expect(second.map(appended)).toEqual(originals.map(appended));
  });

  it("a batch's originals carry the same metadata, meta flags and pins as the export", async () => {
    const lines = new Map((await exportLines('reimport-source')).filter((l) => l.kind === 'message').map((l) => [l.seq, l]));
    const batch = lines.get(1)!.batchId!;
    const res = await t.app.inject({ method: 'GET', url: `/v1/batches/${batch}/messages?limit=1000`, headers: t.auth() });
    expect(res.statusCode, res.body).toBe(200);
    const originals = res.json().messages as Array<ExportLine & { tokens: number }>;
    expect(originals.map((m) => m.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    for (const message of originals) {
      const line = lines.get(message.seq)!;
      expect({ metadata: message.metadata, meta: message.meta, usage: message.usage, pinned: message.pinned }).toEqual({
        metadata: line.metadata,
        meta: line.meta,
        usage: line.usage,
        pinned: line.pinned,
      });
    }
    expect(originals.some((m) => m.meta === true)).toBe(true);
    expect(originals.every((m) => typeof m.metadata?.['uuid'] === 'string')).toBe(true);
  });

  it('a clip-archive line re-imports as nothing: a new conversation writes its own', async () => {
    const clip = (await exportLines('reimport-source')).find((line) => line.kind === 'clip_archive');
    expect(clip).toBeDefined();
    expect(messageFromExportLine(clip!)).toBeNull();
  });
});
