import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { NormalizedMessage } from '../../../src/compaction/types.js';
import { indexArchiveForRecall } from '../../../src/db/repos/recall-index.js';
import { createRecallBackfill } from '../../../src/worker/recall-indexing.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';
import { conversationByExternalId, createWithMessages, simulateCompaction, type SimulatedResult } from '../../helpers/archive-seed.js';

/**
 * Recall by fragment (SPEC §5.9) through GET …/archive/search: the same answers whether the
 * archived originals are indexed (their recall pieces written) or still in the backlog a
 * search reads directly.
 */

interface Hit {
  seq: number;
  role: string;
  batchId: string | null;
  jobId: string;
  rank: number;
  snippet: string;
  tool: string | null;
  match: 'fragment' | 'words';
  lines: Array<{ line: number; text: string; match: boolean }>;
}

const ROOT = '/home/dev/projects/spotter';
const crafted: NormalizedMessage[] = [
  {
    role: 'user',
    content: [{ type: 'text', text: 'Fix the registry crash. The deploy key is kestrel-7731.\nDo not touch the migrations.' }],
  },
  {
    role: 'assistant',
    content: [{ type: 'tool_use', id: 'toolu_r1', name: 'Read', input: { file_path: `${ROOT}/lib/spotter/services/session_registry.ex` } }],
  },
  {
    role: 'user',
    content: [
      {
        type: 'tool_result',
        tool_use_id: 'toolu_r1',
        content: 'defmodule Spotter.Services.SessionRegistry do\n  use GenServer\n  def fetch_pane(id), do: :ok\nend',
      },
    ],
  },
  {
    role: 'assistant',
    content: [
      {
        type: 'tool_use',
        id: 'toolu_b1',
        name: 'Bash',
        input: {
          command: 'mix test test/spotter/session_registry_test.exs --trace 2>&1 | tail -40',
          description: 'run the registry tests',
        },
      },
    ],
  },
  {
    role: 'user',
    content: [
      {
        type: 'tool_result',
        tool_use_id: 'toolu_b1',
        is_error: true,
        content: [
          {
            type: 'text',
            text: 'Compiling 3 files (.ex)\n** (CompileError) lib/spotter/services/session_registry.ex:42: undefined function fetch_pane/2\n    (elixir 1.17.2) lib/kernel/parallel_compiler.ex:410',
          },
        ],
      },
    ],
  },
  {
    role: 'assistant',
    content: [{ type: 'text', text: 'Coverage is 100% now; run 0b6c1e9a-5f7d-4c1e-9b1e-2f1f0c7d9a11 closed bead spotter-4te.' }],
  },
  { role: 'assistant', content: [{ type: 'text', text: 'The slow query took 1000ms, about 100 pct over budget.' }] },
  {
    role: 'assistant',
    content: [{ type: 'text', text: 'Set key_id in the config, and keyXid stays unset. Windows path C:\\temp\\build.log' }],
  },
  { role: 'assistant', content: [{ type: 'text', text: `${'x'.repeat(900)} needle-in-a-long-line ${'y'.repeat(900)}` }] },
  { role: 'user', content: [{ type: 'text', text: 'Still active: session_registry.ex stays in context.' }] },
  { role: 'assistant', content: [{ type: 'text', text: 'Understood.' }] },
];
const ARCHIVED = [1, 2, 3, 4, 5, 6, 7, 8, 9];

let t: TestApi;
const jobs = new Map<string, SimulatedResult>();

beforeAll(async () => {
  t = await createTestApi();
  for (const id of ['recall-indexed', 'recall-backlog']) {
    await createWithMessages(t, id, crafted);
    const conversation = await conversationByExternalId(t.db.db, id);
    jobs.set(
      id,
      await simulateCompaction(
        t.db.db,
        conversation,
        { chunks: [{ seqs: ARCHIVED, summary: 'The registry crash was investigated.' }] },
        { indexAfterCommit: false },
      ),
    );
  }
});
afterAll(async () => {
  await t?.close();
});

async function search(id: string, q: string): Promise<Hit[]> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/v1/conversations/${id}/archive/search?q=${encodeURIComponent(q)}&limit=20`,
    headers: t.auth(),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().hits as Hit[];
}

describe('indexArchiveForRecall', () => {
  it('indexes in bounded, deterministic passes until nothing remains, and never twice', async () => {
    const conversation = await conversationByExternalId(t.db.db, 'recall-indexed');
    const passes = [];
    for (;;) {
      const pass = await indexArchiveForRecall(t.db.db, conversation.id, { limit: 4 });
      passes.push(pass);
      if (!pass.more) break;
    }
    expect(passes.map((p) => [p.messages, p.more])).toEqual([
      [4, true],
      [4, true],
      [1, false],
    ]);
    const [counted] = await t.db.db.execute<{ n: string }>(
      sql`select count(*) as n from archived_recall_pieces where conversation_id = ${conversation.id}`,
    );
    expect(Number(counted!.n)).toBe(passes.reduce((sum, p) => sum + p.pieces, 0));
    expect(await indexArchiveForRecall(t.db.db, conversation.id, { limit: 4 })).toEqual({
      messages: 0,
      pieces: 0,
      more: false,
      next: null,
    });
    // the tool result's pieces carry the tool of the call that an earlier pass indexed
    const tools = await t.db.db.execute<{ seq: string; tool: string | null }>(sql`
      select distinct seq, tool from archived_recall_pieces where conversation_id = ${conversation.id} and seq in (3, 5) order by seq`);
    expect(tools.map((r) => [Number(r.seq), r.tool])).toEqual([
      [3, 'Read'],
      [5, 'Bash'],
    ]);
  });
});

describe.each(['recall-indexed', 'recall-backlog'])('GET …/archive/search by fragment (%s)', (id) => {
  const seqsOf = async (q: string) => (await search(id, q)).map((h) => h.seq).sort((a, b) => a - b);
  const fragmentSeqs = async (q: string) =>
    (await search(id, q))
      .filter((h) => h.match === 'fragment')
      .map((h) => h.seq)
      .sort((a, b) => a - b);

  it('finds a file by its relative path, its file name and its whole path, naming seq, role, tool, batch and the line', async () => {
    for (const q of ['services/session_registry.ex', 'lib/spotter/services/session_registry.ex']) {
      const hits = await search(id, q);
      // the Read call, and the compile error naming the file (never the active message 10)
      expect(
        hits.map((h) => h.seq).sort((a, b) => a - b),
        q,
      ).toEqual([2, 5]);
      expect(hits.every((h) => h.match === 'fragment' && h.rank >= 1)).toBe(true);
    }
    expect(await seqsOf(`${ROOT}/lib/spotter/services/session_registry.ex`)).toEqual([2]);
    const [read] = (await search(id, `${ROOT}/lib/spotter/services/session_registry.ex`)).filter((h) => h.seq === 2);
    expect(read).toMatchObject({ role: 'assistant', tool: 'Read', batchId: jobs.get(id)!.batchIds[0], jobId: jobs.get(id)!.jobId });
    expect(read!.lines).toEqual([{ line: 1, text: `${ROOT}/lib/spotter/services/session_registry.ex`, match: true }]);
    expect(read!.snippet).toContain('**');
    expect(await seqsOf('session_registry.ex')).toEqual([2, 5]);
    expect(await seqsOf('session_registry')).toEqual([2, 4, 5]);
  });

  it('finds a command by a fragment, and an error by a piece of its line with a line of context either side', async () => {
    const [command] = await search(id, 'registry_test.exs --trace');
    expect(command).toMatchObject({ seq: 4, tool: 'Bash', match: 'fragment' });
    const [error] = await search(id, 'undefined function fetch_pane/2');
    expect(error).toMatchObject({ seq: 5, role: 'user', tool: 'Bash' });
    expect(error!.lines).toEqual([
      { line: 1, text: 'Compiling 3 files (.ex)', match: false },
      { line: 2, text: '** (CompileError) lib/spotter/services/session_registry.ex:42: undefined function fetch_pane/2', match: true },
      { line: 3, text: '    (elixir 1.17.2) lib/kernel/parallel_compiler.ex:410', match: false },
    ]);
    expect(await seqsOf('session_registry.ex:42')).toEqual([5]);
  });

  it('finds ids, whole or in part, case-insensitively', async () => {
    expect(await seqsOf('0b6c1e9a-5f7d-4c1e-9b1e-2f1f0c7d9a11')).toEqual([6]);
    expect(await seqsOf('9B1E-2F1F')).toEqual([6]);
    expect(await seqsOf('spotter-4te')).toEqual([6]);
    expect(await seqsOf('kestrel-7731')).toEqual([1]);
  });

  it('takes %, _ and \\ literally', async () => {
    // (full-text search may add word hits: "100" is a word of seq 7)
    expect(await fragmentSeqs('100%')).toEqual([6]);
    expect(await fragmentSeqs('y_i')).toEqual([8]);
    expect(await fragmentSeqs('\\temp\\build')).toEqual([8]);
    expect(await seqsOf('%%%')).toEqual([]);
    expect(await seqsOf('___')).toEqual([]);
  });

  it('finds a fragment inside a line longer than one piece, and cuts the line around it', async () => {
    const [hit] = await search(id, 'needle-in-a-long-line');
    expect(hit).toMatchObject({ seq: 9, match: 'fragment' });
    expect(hit!.lines).toHaveLength(1);
    expect(Array.from(hit!.lines[0]!.text).length).toBeLessThanOrEqual(240);
    expect(hit!.lines[0]!.text).toContain('needle-in-a-long-line');
  });

  it('still answers words by full-text search (stemming), after the fragment hits', async () => {
    const hits = await search(id, 'deploying keys');
    expect(hits.map((h) => [h.seq, h.match])).toEqual([[1, 'words']]);
    expect(hits[0]!.rank).toBeLessThan(1);
    // the lines holding the query's words (as stemmed), with their context
    expect(hits[0]!.lines).toEqual([
      { line: 1, text: 'Fix the registry crash. The deploy key is kestrel-7731.', match: true },
      { line: 2, text: 'Do not touch the migrations.', match: false },
    ]);
    const registry = await search(id, 'registry');
    // a substring of seqs 2-5 (fragment hits first), and a word in none other
    expect(registry.slice(0, 4).every((h) => h.match === 'fragment')).toBe(true);
  });
});

describe('the maintenance backfill', () => {
  it('indexes the archives still in the backlog in bounded steps, then stops looking', async () => {
    const unindexed = async () =>
      Number(
        (
          await t.db.db.execute<{ n: string }>(sql`
            select count(*) as n from archived_messages a
             where a.reason <> 'superseded_clip' and not exists (select 1 from archived_recall_indexed i where i.archive_id = a.archive_id)`)
        )[0]!.n,
      );
    expect(await unindexed()).toBe(ARCHIVED.length);
    const said: string[] = [];
    const log = { info: (msg: string) => said.push(msg), warn: (_obj: unknown, msg: string) => said.push(`warn: ${msg}`) };
    const backfill = createRecallBackfill(t.db.db, log as never);
    await backfill.step();
    expect(await unindexed()).toBe(0);
    expect(said).toEqual(['recall backfill: every archived message is indexed']);
    await backfill.step();
    expect(said).toHaveLength(1);
    // the same answers from the pieces and the full-text vectors the indexer wrote
    const [hit] = await search('recall-backlog', 'undefined function fetch_pane/2');
    expect(hit).toMatchObject({ seq: 5, tool: 'Bash', match: 'fragment' });
    const [withoutVector] = await t.db.db.execute<{ n: string }>(
      sql`select count(*) as n from archived_recall_indexed where search_text is null`,
    );
    expect(Number(withoutVector!.n)).toBe(0);
    expect((await search('recall-backlog', 'deploying keys')).map((h) => [h.seq, h.match])).toEqual([[1, 'words']]);
  });
});

describe('erasing a conversation', () => {
  it('erases its recall pieces and markers with its archive', async () => {
    const conversation = await conversationByExternalId(t.db.db, 'recall-indexed');
    const rows = async () =>
      (
        await t.db.db.execute<{ pieces: string; markers: string }>(sql`
          select (select count(*) from archived_recall_pieces where conversation_id = ${conversation.id}) as pieces,
                 (select count(*) from archived_recall_indexed where conversation_id = ${conversation.id}) as markers`)
      ).map((r) => [Number(r.pieces), Number(r.markers)])[0]!;
    expect((await rows())[0]).toBeGreaterThan(0);
    const res = await t.app.inject({ method: 'DELETE', url: '/v1/conversations/recall-indexed', headers: t.auth() });
    expect(res.statusCode, res.body).toBe(204);
    expect(await rows()).toEqual([0, 0]);
  });
});
