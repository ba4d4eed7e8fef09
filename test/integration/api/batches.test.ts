import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApi, type TestApi } from '../../helpers/api.js';
import { type ArchiveScenario, MASK_1, seedArchiveScenario } from '../../helpers/archive-seed.js';

let t: TestApi;
let s: ArchiveScenario;
beforeAll(async () => {
  t = await createTestApi();
  s = await seedArchiveScenario(t, 'batches-conv');
});
afterAll(async () => {
  await t?.close();
});

interface BatchBody {
  id: string;
  conversationId: string;
  jobId: string;
  level: number;
  summary: string;
  seqs: number[];
  seqRanges: string;
  supersededBy: string | null;
  sourceMessages: number;
}
interface OriginalBody {
  seq: number;
  role: string;
  kind: string;
  content: unknown[];
  archived: boolean;
  reason: string | null;
  batchId: string | null;
}

const get = (url: string, key?: string) => t.app.inject({ method: 'GET', url, headers: t.auth(key) });

async function listIds(query: string): Promise<string[]> {
  const res = await get(`/v1/conversations/batches-conv/batches${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().batches as BatchBody[]).map((b) => b.id);
}

async function allOriginals(batchId: string, limit: number): Promise<{ messages: OriginalBody[]; pages: number }> {
  const messages: OriginalBody[] = [];
  let after: number | null = 0;
  let pages = 0;
  while (after !== null) {
    const res = await get(`/v1/batches/${batchId}/messages?after=${after}&limit=${limit}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { messages: OriginalBody[]; nextAfter: number | null };
    messages.push(...body.messages);
    after = body.nextAfter;
    pages++;
  }
  return { messages, pages };
}

describe('GET /v1/conversations/:id/batches', () => {
  it('lists every batch oldest first with the hierarchy: level, coverage, supersededBy', async () => {
    const res = await get('/v1/conversations/batches-conv/batches');
    expect(res.statusCode).toBe(200);
    const body = res.json() as { batches: BatchBody[]; nextAfter: string | null };
    const { A, B, C, D, R } = s.ids;
    // job 1's batches first; within job 2, by first seq covered: R (1) before C (35) before D (45)
    expect(body.batches.map((b) => b.id)).toEqual([A, B, R, C, D]);
    expect(body.nextAfter).toBeNull();
    const byId = new Map(body.batches.map((b) => [b.id, b]));
    expect(byId.get(A)).toMatchObject({
      conversationId: 'batches-conv',
      jobId: s.first.jobId,
      level: 0,
      seqRanges: '1-21',
      sourceMessages: 21,
      supersededBy: R,
    });
    expect(byId.get(B)).toMatchObject({ level: 0, seqRanges: '22-34', supersededBy: R });
    expect(byId.get(R)).toMatchObject({ jobId: s.second.jobId, level: 1, seqRanges: '1-34', supersededBy: null });
    expect(byId.get(R)!.seqs).toEqual(Array.from({ length: 34 }, (_, i) => i + 1));
    expect(byId.get(D)).toMatchObject({ level: 0, seqs: [45, 46, 49, 50], seqRanges: '45-46,49-50', supersededBy: null });
    expect(byId.get(C)!.summary).toBe('The agent wired the propagator setup into the application.');
  });

  it('filters by level and by liveness', async () => {
    const { A, B, C, D, R } = s.ids;
    expect(await listIds('?level=0')).toEqual([A, B, C, D]);
    expect(await listIds('?level=1')).toEqual([R]);
    expect(await listIds('?live=true')).toEqual([R, C, D]);
    expect(await listIds('?live=false')).toEqual([A, B]);
    expect(await listIds('?level=0&live=true')).toEqual([C, D]);
  });

  it('pages with after = the last id of the previous page, in the same order as one page', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const res = await get(`/v1/conversations/batches-conv/batches?limit=2${after ? `&after=${after}` : ''}`);
      const body = res.json() as { batches: BatchBody[]; nextAfter: string | null };
      expect(body.batches.length).toBeLessThanOrEqual(2);
      seen.push(...body.batches.map((b) => b.id));
      after = body.nextAfter;
      if (after === null) break;
    }
    expect(after).toBeNull();
    expect(seen).toEqual(await listIds(''));
  });

  it('rejects a cursor that is no batch of the conversation, and bad filters, naming the field', async () => {
    const foreign = await get('/v1/conversations/batches-conv/batches?after=00000000-0000-4000-8000-000000000000');
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json()).toMatchObject({ code: 'INVALID_CURSOR', errors: [{ field: 'querystring.after' }] });
    const level = await get('/v1/conversations/batches-conv/batches?level=-1');
    expect(level.statusCode).toBe(400);
    expect(level.json().errors[0].field).toBe('querystring.level');
  });

  it("answers 404 for another tenant's conversation", async () => {
    const res = await get('/v1/conversations/batches-conv/batches', t.otherKey);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('CONVERSATION_NOT_FOUND');
  });
});

describe('GET /v1/batches/:id', () => {
  it('returns the batch as listed', async () => {
    const listed = (await get('/v1/conversations/batches-conv/batches')).json().batches as BatchBody[];
    const res = await get(`/v1/batches/${s.ids.R}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(listed.find((b) => b.id === s.ids.R));
  });

  it("is a 404 for another tenant's batch and for an unknown id, a 400 for a malformed one", async () => {
    expect((await get(`/v1/batches/${s.ids.A}`, t.otherKey)).statusCode).toBe(404);
    expect((await get(`/v1/batches/${s.ids.A}/messages`, t.otherKey)).statusCode).toBe(404);
    const unknown = await get('/v1/batches/00000000-0000-4000-8000-000000000000');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('BATCH_NOT_FOUND');
    const malformed = await get('/v1/batches/not-a-uuid');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().errors[0].field).toBe('params.id');
  });
});

describe('GET /v1/batches/:id/messages', () => {
  it('returns the originals of a level-0 batch in seq order, exactly as appended', async () => {
    const { messages, pages } = await allOriginals(s.ids.A, 8);
    expect(pages).toBe(3);
    expect(messages.map((m) => m.seq)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    for (const m of messages) {
      expect(m).toMatchObject({ kind: 'message', archived: true, reason: 'summarized', batchId: s.ids.A });
      expect(m.content).toEqual(s.before.get(m.seq)!.content);
      expect(m.role).toBe(s.before.get(m.seq)!.role);
    }
  });

  it('returns the original, not the masked version, of a message masked before it was summarized', async () => {
    const { messages } = await allOriginals(s.ids.C, 200);
    expect(messages.map((m) => m.seq)).toEqual([35, 36, 37, 38, 39, 40, 41, 42, 43, 44]);
    const masked = messages.find((m) => m.seq === 40)!;
    expect(JSON.stringify(masked.content)).not.toContain(MASK_1);
    expect(masked.content).toEqual(s.before.get(40)!.content);
    expect(masked).toMatchObject({ reason: 'summarized', batchId: s.ids.C });
  });

  it('covers a gap-ful batch without the kept messages in between', async () => {
    const { messages } = await allOriginals(s.ids.D, 200);
    expect(messages.map((m) => m.seq)).toEqual([45, 46, 49, 50]);
  });

  it('returns, for a level-1 batch, the originals of every seq it absorbed, each with its level-0 batch', async () => {
    const { messages, pages } = await allOriginals(s.ids.R, 10);
    expect(pages).toBe(4);
    expect(messages.map((m) => m.seq)).toEqual(Array.from({ length: 34 }, (_, i) => i + 1));
    expect(messages.every((m) => m.batchId === (m.seq <= 21 ? s.ids.A : s.ids.B))).toBe(true);
    expect(messages.map((m) => m.content)).toEqual(messages.map((m) => s.before.get(m.seq)!.content));
  });

  it('ends with nextAfter null exactly at the last page and honours after', async () => {
    const res = await get(`/v1/batches/${s.ids.A}/messages?after=19&limit=2`);
    expect(res.json().messages.map((m: OriginalBody) => m.seq)).toEqual([20, 21]);
    expect(res.json().nextAfter).toBeNull();
    const more = await get(`/v1/batches/${s.ids.A}/messages?after=18&limit=2`);
    expect(more.json().nextAfter).toBe(20);
  });
});
