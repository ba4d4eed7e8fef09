import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../harness/transcripts.js';
import type { NormalizedMessage } from '../../../src/compaction/types.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';
import {
  conversationByExternalId,
  createWithMessages,
  maskBlocks,
  readActive,
  simulateCompaction,
  type SimulatedResult,
} from '../../helpers/archive-seed.js';

interface Hit {
  seq: number;
  role: string;
  batchId: string | null;
  jobId: string;
  rank: number;
  snippet: string;
}

const PLACEHOLDER = '[output masked: zeppelinplaceholder]';
const crafted: NormalizedMessage[] = [
  { role: 'system', content: [{ type: 'text', text: 'You are a careful deployment agent.' }] },
  { role: 'user', content: [{ type: 'text', text: 'Deploy the service. The deploy key is kestrel-7731 and the region is eu-west-3.' }] },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_s1', name: 'bash', input: { command: 'psql -h db.internal -p 5432' } }] },
  {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_s1', content: 'psql: error: connection to server failed: ECONNREFUSED' }],
  },
  { role: 'assistant', content: [{ type: 'text', text: 'A quokka, a quokka, and one more quokka live in the burrow.' }] },
  {
    role: 'user',
    content: [{ type: 'text', text: `Some notes: ${'the weather was mild and the logs were quiet, '.repeat(20)}and somewhere a quokka.` }],
  },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_s2', name: 'read_file', input: { path: 'config/birds.yaml' } }] },
  {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_s2', content: [{ type: 'text', text: 'albatross_threshold: 42' }] }],
  },
  { role: 'user', content: [{ type: 'text', text: 'Still active: the cormorant stays in context.' }] },
  { role: 'assistant', content: [{ type: 'text', text: 'Understood.' }] },
];

let t: TestApi;
let first: SimulatedResult;
let second: SimulatedResult;
/** seqs whose originals live in the archive */
const archivedSeqs = new Set<number>();

beforeAll(async () => {
  t = await createTestApi();
  const [source] = loadRealTranscript('spotter-claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl').conversations;
  // crafted 1-10, then a real session at 11-70
  await createWithMessages(t, 'search-conv', [...crafted, ...source!.messages.slice(0, 60)]);
  const active = new Map((await readActive(t, 'search-conv')).map((m) => [m.seq, m]));
  const conversation = await conversationByExternalId(t.db.db, 'search-conv');
  first = await simulateCompaction(t.db.db, conversation, {
    chunks: [{ seqs: [2], summary: 'The user asked for a deployment.' }],
    rewrites: [{ seq: 4, reason: 'masked', content: maskBlocks(active.get(4)!.content, PLACEHOLDER) }],
  });
  const real = Array.from({ length: 30 }, (_, i) => 11 + i);
  second = await simulateCompaction(t.db.db, conversation, {
    chunks: [
      { seqs: [3, 4, 5, 6, 7, 8], summary: 'The database connection failed; config was read.' },
      { seqs: real, summary: 'The agent worked on bead spotter-4te.' },
    ],
  });
  for (const seq of [2, 3, 4, 5, 6, 7, 8, ...real]) archivedSeqs.add(seq);
});
afterAll(async () => {
  await t?.close();
});

async function search(q: string, extra = ''): Promise<Hit[]> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/v1/conversations/search-conv/archive/search?q=${encodeURIComponent(q)}${extra}`,
    headers: t.auth(),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().hits as Hit[];
}

describe('GET /v1/conversations/:id/archive/search', () => {
  it('finds a detail that only an archived original holds, with its batch, job and a highlighted snippet', async () => {
    const hits = await search('kestrel-7731');
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ seq: 2, role: 'user', batchId: first.batchIds[0], jobId: first.jobId });
    expect(hits[0]!.rank).toBeGreaterThan(0);
    expect(hits[0]!.snippet).toMatch(/\*\*kestrel/);
  });

  it('searches the original of a masked message once, never its placeholder', async () => {
    const hits = await search('ECONNREFUSED');
    // archived twice (original when masked, masked version when summarized): one hit, the original's job, the summarizing batch
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ seq: 4, jobId: first.jobId, batchId: second.batchIds[0] });
    expect(hits[0]!.snippet).toContain('**ECONNREFUSED**');
    expect(await search('zeppelinplaceholder')).toEqual([]);
  });

  it('does not search the active history', async () => {
    expect(await search('cormorant')).toEqual([]);
  });

  it('indexes tool inputs, tool names and block-array tool results', async () => {
    expect((await search('psql')).map((h) => h.seq).sort()).toEqual([3, 4]);
    expect((await search('albatross_threshold')).map((h) => h.seq)).toEqual([8]);
    expect((await search('read_file')).map((h) => h.seq)).toContain(7);
  });

  it('ranks denser matches first and honours limit', async () => {
    expect((await search('quokka')).map((h) => h.seq)).toEqual([5, 6]);
    expect((await search('quokka', '&limit=1')).map((h) => h.seq)).toEqual([5]);
  });

  it('takes web-search syntax: phrases, OR, exclusions; stemming matches word forms', async () => {
    expect((await search('"deploy key" -quokka')).map((h) => h.seq)).toEqual([2]);
    expect((await search('kestrel OR albatross_threshold')).map((h) => h.seq).sort()).toEqual([2, 8]);
    expect((await search('deploying keys')).map((h) => h.seq)).toEqual([2]);
  });

  it('covers real archived messages and only archived ones', async () => {
    const hits = await search('opentelemetry', '&limit=100');
    expect(hits.length).toBeGreaterThan(0);
    for (const hit of hits) expect(archivedSeqs.has(hit.seq), `seq ${hit.seq} is active`).toBe(true);
    expect(hits.every((h) => h.batchId === second.batchIds[1])).toBe(true);
    const ranks = hits.map((h) => h.rank);
    expect(ranks).toEqual([...ranks].sort((a, b) => b - a));
  });

  it('answers 200 with no hits for a query of stop words only', async () => {
    expect(await search('the and of')).toEqual([]);
  });

  it('requires q, naming querystring.q, and scopes to the tenant', async () => {
    for (const query of ['', '?q=', '?q=%20%20']) {
      const res = await t.app.inject({ method: 'GET', url: `/v1/conversations/search-conv/archive/search${query}`, headers: t.auth() });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors[0].field).toBe('querystring.q');
    }
    const other = await t.app.inject({
      method: 'GET',
      url: '/v1/conversations/search-conv/archive/search?q=kestrel',
      headers: t.auth(t.otherKey),
    });
    expect(other.statusCode).toBe(404);
  });
});
