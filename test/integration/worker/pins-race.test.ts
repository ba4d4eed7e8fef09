import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../harness/transcripts.js';
import { listChunks } from '../../../src/db/repos/chunks.js';
import { getJob } from '../../../src/db/repos/jobs.js';
import { batches } from '../../../src/db/schema.js';
import type { WorkerDeps } from '../../../src/worker/deps.js';
import { processFinalize } from '../../../src/worker/processors/finalize.js';
import { processPlan } from '../../../src/worker/processors/plan.js';
import { processSummarizeChunk } from '../../../src/worker/processors/summarize.js';
import { activeMessages, compact, seedConversation } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';
import { workerStepDeps } from '../../helpers/worker-steps.js';

/**
 * A pin that lands while a compaction of its span is in flight (planned, summarized, not yet
 * committed): the commit must not archive the message. The steps are called directly, so the
 * pin sits exactly between plan and commit, with the local summarizer and no queue consumer.
 */

let stack: Stack;
let deps: WorkerDeps;
beforeAll(async () => {
  stack = await createStack({ workers: false });
  deps = workerStepDeps(stack);
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

const session = () =>
  loadRealTranscript('spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl').conversations[0]!.messages.slice(0, 80);
const pin = (method: 'PUT' | 'DELETE', seq: number) =>
  stack.app.inject({ method, url: `/v1/conversations/race/messages/${seq}/pin`, headers: stack.auth() });

describe('a pin during a compaction', () => {
  it('makes the commit a stale snapshot that changes nothing; once unpinned, the same plan commits', async () => {
    await seedConversation(stack, 'race', session(), { policy: { auto: false, chunkTokens: 4000, keepRecent: 6 } });
    const job = await compact(stack, 'race', { strategy: 'summarize' });
    await processPlan({ jobId: job.id }, deps);
    const chunks = await listChunks(deps.db, job.id);
    await Promise.all(chunks.map((_, chunkIndex) => processSummarizeChunk({ jobId: job.id, chunkIndex }, deps)));

    const summarized = chunks.flatMap((c) => c.seqs);
    const target = summarized[Math.floor(summarized.length / 2)] as number;
    const before = await activeMessages(stack, 'race');
    expect((await pin('PUT', target)).statusCode).toBe(200);

    await expect(processFinalize({ jobId: job.id }, deps)).rejects.toMatchObject({ code: 'STALE_SNAPSHOT', retryable: false });
    const after = await activeMessages(stack, 'race');
    expect(after.map((m) => ({ ...m, pinned: undefined }))).toEqual(before.map((m) => ({ ...m, pinned: undefined })));
    expect(after.find((m) => m.seq === target)).toMatchObject({ pinned: true });
    expect(await deps.db.select().from(batches).where(eq(batches.jobId, job.id))).toEqual([]);
    expect((await getJob(deps.db, job.id))?.status).toBe('summarizing');

    expect((await pin('DELETE', target)).statusCode).toBe(200);
    await processFinalize({ jobId: job.id }, deps);
    expect((await getJob(deps.db, job.id))?.status).toBe('completed');
    const committed = await activeMessages(stack, 'race');
    expect(committed.some((m) => m.seq === target && m.kind === 'message')).toBe(false);
    expect(
      await deps.db
        .select()
        .from(batches)
        .where(and(eq(batches.jobId, job.id), eq(batches.level, 0))),
    ).toHaveLength(chunks.length);
  });
});
