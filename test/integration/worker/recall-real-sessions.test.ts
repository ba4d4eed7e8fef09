import { readFileSync } from 'node:fs';
import path from 'node:path';

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript, REAL_TRANSCRIPTS_DIR } from '../../../harness/transcripts.js';
import type { Block } from '../../../src/compaction/types.js';
import { listChunks } from '../../../src/db/repos/chunks.js';
import { getJob } from '../../../src/db/repos/jobs.js';
import type { WorkerDeps } from '../../../src/worker/deps.js';
import { processFinalize } from '../../../src/worker/processors/finalize.js';
import { processPlan } from '../../../src/worker/processors/plan.js';
import { processSummarizeChunk } from '../../../src/worker/processors/summarize.js';
import { compact, seedConversation } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';
import { workerStepDeps } from '../../helpers/worker-steps.js';

/**
 * Recall's target (issue 21): over every real Claude Code session, each file path the
 * compacted span touched is found by its path relative to the session's working directory
 * and by its file name, once the worker's own finalize has committed and indexed.
 */

const SESSIONS = [
  '258c7280-ae70-4798-800f-63464d01a85d',
  '4d5611e5-241a-462a-8d15-5122611a9569',
  '8463c716-a2ea-4c14-9efa-87158ebd9f20',
  'ae4a77f8-aedd-4bc1-888f-c94edc91af04',
];
const POLICY = { auto: false, keepRecent: 6 };

let stack: Stack;
let deps: WorkerDeps;
beforeAll(async () => {
  stack = await createStack({ workers: false });
  deps = workerStepDeps(stack);
});
afterAll(async () => {
  await stack?.close();
});

/** The working directory Claude Code records on its jsonl lines (the first one that has it). */
function sessionCwd(file: string): string {
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes('"cwd"')) continue;
    const cwd = (JSON.parse(line) as { cwd?: unknown }).cwd;
    if (typeof cwd === 'string' && cwd !== '') return cwd;
  }
  throw new Error(`${file} records no cwd`);
}

/** Runs the real pipeline (plan, every chunk, finalize: commit then recall indexing) on one session. */
async function compactSession(id: string, session: string): Promise<string> {
  const [conversation] = loadRealTranscript(`spotter-claude-code/${session}.jsonl`).conversations;
  await seedConversation(stack, id, conversation!.messages, { policy: POLICY });
  const job = await compact(stack, id, { strategy: 'summarize' });
  await processPlan({ jobId: job.id }, deps);
  const chunks = await listChunks(deps.db, job.id);
  for (const chunk of chunks) await processSummarizeChunk({ jobId: job.id, chunkIndex: chunk.idx }, deps);
  await processFinalize({ jobId: job.id }, deps);
  expect((await getJob(deps.db, job.id))?.status).toBe('completed');
  return job.id;
}

/** file_path / path inputs of the tool calls the compaction archived, with the seqs of those calls. */
async function touchedPaths(id: string): Promise<Map<string, Set<number>>> {
  const rows = await deps.db.execute<{ seq: string; content: Block[] }>(sql`
    select a.seq, a.content from archived_messages a join conversations c on c.id = a.conversation_id
     where c.external_id = ${id} and a.reason = 'summarized' and a.kind = 'message'`);
  const paths = new Map<string, Set<number>>();
  for (const row of rows) {
    for (const block of row.content) {
      if (block.type !== 'tool_use') continue;
      const input = block.input as Record<string, unknown>;
      for (const key of ['file_path', 'path']) {
        const value = input[key];
        if (typeof value !== 'string' || value.trim() === '') continue;
        const seqs = paths.get(value) ?? new Set<number>();
        seqs.add(Number(row.seq));
        paths.set(value, seqs);
      }
    }
  }
  return paths;
}

type Hit = { seq: number; tool: string | null; match: string; lines: Array<{ text: string; match: boolean }> };

async function search(id: string, q: string): Promise<Hit[]> {
  const res = await stack.app.inject({
    method: 'GET',
    url: `/v1/conversations/${id}/archive/search?q=${encodeURIComponent(q)}&limit=100`,
    headers: stack.auth(),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().hits as Hit[];
}

/** A path is found when a fragment hit holds it in a matching line, among them one of the calls that touched it. */
async function expectFound(id: string, fragment: string, callSeqs: ReadonlySet<number>): Promise<void> {
  const hits = await search(id, fragment);
  const fragmentHits = hits.filter((h) => h.match === 'fragment');
  expect(fragmentHits.length, `"${fragment}" found nothing`).toBeGreaterThan(0);
  for (const hit of fragmentHits) {
    expect(
      hit.lines.some((l) => l.match && l.text.toLowerCase().includes(fragment.toLowerCase())),
      `${fragment} in seq ${hit.seq}`,
    ).toBe(true);
  }
  // the call that touched it is among the hits unless the fragment is in more than 100 messages
  if (fragmentHits.length < 100)
    expect(
      fragmentHits.some((h) => callSeqs.has(h.seq)),
      `"${fragment}": no hit at the call`,
    ).toBe(true);
}

describe('recall over the real Claude Code sessions', () => {
  for (const session of SESSIONS) {
    it(`${session.slice(0, 8)}: every path the span touched, by its path relative to the cwd and by its file name`, async () => {
      const id = `recall-${session.slice(0, 8)}`;
      const cwd = sessionCwd(path.join(REAL_TRANSCRIPTS_DIR, 'raw', 'spotter-claude-code', `${session}.jsonl`));
      await compactSession(id, session);
      const [state] = await deps.db.execute<{ unindexed: string; pieces: string }>(sql`
        select (select count(*) from archived_messages a where a.conversation_id = c.id
                  and not exists (select 1 from archived_recall_indexed i where i.archive_id = a.archive_id)
                  and a.reason <> 'superseded_clip') as unindexed,
               (select count(*) from archived_recall_pieces p where p.conversation_id = c.id) as pieces
          from conversations c where c.external_id = ${id}`);
      // finalize indexed the whole span after its commit
      expect(Number(state!.unindexed)).toBe(0);
      expect(Number(state!.pieces)).toBeGreaterThan(0);

      const paths = await touchedPaths(id);
      expect(paths.size).toBeGreaterThan(3);
      for (const [touched, seqs] of paths) {
        const relative = touched.startsWith(`${cwd}/`) ? touched.slice(cwd.length + 1) : touched;
        await expectFound(id, relative, seqs);
        const name = path.posix.basename(touched);
        if (Array.from(name).length >= 3) await expectFound(id, name, seqs);
      }
    });
  }

  it('a revert removes the reverted originals from recall with them', async () => {
    const jobId = await compactSession('recall-revert', SESSIONS[2]!);
    const pieces = async () =>
      Number(
        (
          await deps.db.execute<{ n: string }>(sql`
            select count(*) as n from archived_recall_pieces p join conversations c on c.id = p.conversation_id where c.external_id = 'recall-revert'`)
        )[0]!.n,
      );
    expect(await pieces()).toBeGreaterThan(0);
    const [touched] = [...(await touchedPaths('recall-revert')).keys()];
    expect((await search('recall-revert', path.posix.basename(touched!))).length).toBeGreaterThan(0);

    const reverted = await stack.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/revert`, headers: stack.auth() });
    expect(reverted.statusCode, reverted.body).toBe(200);
    expect(await pieces()).toBe(0);
    expect(await search('recall-revert', path.posix.basename(touched!))).toEqual([]);
  });
});
