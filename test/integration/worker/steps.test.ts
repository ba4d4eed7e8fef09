import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { loadRealTranscript } from '../../../harness/transcripts.js';
import { LedgerSchema } from '../../../src/compaction/ledger/index.js';
import { chunkOutputBudget, consolidationOutputBudget, outputCap } from '../../../src/compaction/plan/budget.js';
import { completeLines, holdsEverySection, IDENTIFIERS_HEADING } from '../../../src/compaction/summarize/index.js';
import { FOCUS_PREFIX, requestedLengthTokens, wordsFor } from '../../../src/compaction/summarize/prompt.js';
import { mergePolicy } from '../../../src/config/policy.js';
import { listChunks } from '../../../src/db/repos/chunks.js';
import { getJob } from '../../../src/db/repos/jobs.js';
import { outputLimitFor } from '../../../src/llm/models.js';
import type { WorkerDeps } from '../../../src/worker/deps.js';
import { processFinalize } from '../../../src/worker/processors/finalize.js';
import { processPlan } from '../../../src/worker/processors/plan.js';
import { processSummarizeChunk } from '../../../src/worker/processors/summarize.js';
import { activeMessages, compact, seedConversation } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';
import { workerStepDeps } from '../../helpers/worker-steps.js';

/**
 * The worker's steps called directly against real Postgres and llm-sim (no queue consumer):
 * what each step reads and writes, and what it sends, without polling through the API.
 */

let sim: TestLlmSim;
let stack: Stack;
let deps: WorkerDeps;
beforeAll(async () => {
  sim = await startTestLlmSim();
  stack = await createStack({ workers: false, env: { ANTHROPIC_BASE_URL: sim.url, COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5' } });
  deps = workerStepDeps(stack);
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
});
beforeEach(() => {
  sim.control.reset();
  sim.control.setFaults({});
  sim.control.setProfile('instant');
});

const session = () => loadRealTranscript('spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl').conversations[0]!.messages;
const POLICY = { auto: false, chunkTokens: 4000, keepRecent: 6 };

type Body = { max_tokens: number; system?: string; messages: Array<{ role: string; content: unknown }> };
const bodies = () => sim.control.callLog().map((c) => c.body as Body);
/** max_tokens sent for a budget: the runaway cap above it (the directive asks for the budget) */
const capOf = (budget: number) => outputCap(budget, outputLimitFor('claude-haiku-4-5'));
/** the length, in tokens, a directive asking for `budget` names (words rounded down to tens) */
const askedFor = (budget: number) => Math.round(wordsFor(budget) / 0.6);
const lastText = (body: Body | undefined) => {
  const content = body?.messages[body.messages.length - 1]?.content;
  return typeof content === 'string' ? content : JSON.stringify(content);
};

/** Plans a compaction of a fresh conversation and returns its job id and chunk rows. */
async function planned(id: string, policy: Record<string, unknown> = POLICY, options: Record<string, unknown> = { strategy: 'summarize' }) {
  await seedConversation(stack, id, session(), { policy });
  const job = await compact(stack, id, options);
  await processPlan({ jobId: job.id }, deps);
  return { jobId: job.id, chunks: await listChunks(deps.db, job.id) };
}

async function runChunks(jobId: string, count: number) {
  await Promise.all(Array.from({ length: count }, (_, chunkIndex) => processSummarizeChunk({ jobId, chunkIndex }, deps)));
}

describe('plan step', () => {
  it('writes one typed row per chunk with a budget sized to its source, and freezes the policy on the job', async () => {
    const { jobId, chunks } = await planned('plan-rows');
    const job = await getJob(deps.db, jobId);
    expect(job?.status).toBe('summarizing');
    expect(chunks.length).toBeGreaterThan(1);
    const policy = mergePolicy(POLICY);
    for (const chunk of chunks) {
      expect(chunk.status).toBe('pending');
      expect(chunk.outputBudget).toBe(chunkOutputBudget(policy, chunk.sourceTokens));
      expect(chunk.sourceTokens).toBeLessThanOrEqual(policy.chunkTokens);
    }
    expect(job?.policy).toMatchObject({ chunkTokens: 4000, keepRecent: 6 });
    expect(job?.progress).toEqual({ chunksDone: 0, chunksTotal: chunks.length });
    // a policy edit after planning does not reach the running job
    await deps.db.execute(sql`update conversations set policy = policy || '{"summaryRatio": 0.9}'::jsonb where external_id = 'plan-rows'`);
    await runChunks(jobId, 1);
    expect(bodies()[0]?.max_tokens).toBe(capOf(chunks[0]!.outputBudget));
    expect(requestedLengthTokens(lastText(bodies()[0]))).toBe(askedFor(chunks[0]!.outputBudget));
  });
});

describe('summarize step', () => {
  it('makes one call per chunk, sized to its budget, naming identifiers and carrying no previous summaries; a repeat pays nothing', async () => {
    const { jobId, chunks } = await planned('one-round');
    await runChunks(jobId, chunks.length);
    expect(bodies()).toHaveLength(chunks.length);
    // the directive asks for the budget; max_tokens is the runaway cap above it
    expect(
      bodies()
        .map((b) => b.max_tokens)
        .sort(),
    ).toEqual(chunks.map((c) => capOf(c.outputBudget)).sort());
    expect(
      bodies()
        .map((b) => requestedLengthTokens(lastText(b)))
        .sort(),
    ).toEqual(chunks.map((c) => askedFor(c.outputBudget)).sort());
    const done = await listChunks(deps.db, jobId);
    expect(done.every((c) => c.status === 'done' && c.fallback === null && (c.summary ?? '').length > 0)).toBe(true);
    // the gate list is every identifier of the source; the answer is counted against it, never padded with a list
    for (const chunk of done) {
      expect(chunk.identifiers.length).toBeGreaterThan(0);
      expect(chunk.identifiersFound).toBeLessThanOrEqual(chunk.identifiers.length);
      expect(chunk.summary).not.toContain(IDENTIFIERS_HEADING);
    }
    // the span's state ledger is computed beside the call, with no LLM
    expect(done.some((chunk) => LedgerSchema.parse(chunk.ledger).files.length > 0)).toBe(true);
    expect((await getJob(deps.db, jobId))?.progress).toEqual({ chunksDone: chunks.length, chunksTotal: chunks.length });
    await runChunks(jobId, chunks.length);
    expect(bodies()).toHaveLength(chunks.length);
  });

  it("every chunk's request carries the plan's orientation header and the job's focus", async () => {
    const focus = 'the session registry and its pane ids';
    const { jobId, chunks } = await planned('header-focus', POLICY, { strategy: 'summarize', focus });
    const header = ((await getJob(deps.db, jobId))?.plan as { header?: string } | null)?.header;
    expect(header).toEqual(expect.stringContaining("The user's latest request"));
    await runChunks(jobId, chunks.length);
    const texts = bodies().map((b) => JSON.stringify(b.messages));
    expect(texts).toHaveLength(chunks.length);
    for (const text of texts) {
      expect(text).toContain(JSON.stringify(`${FOCUS_PREFIX}${focus}`).slice(1, -1));
      expect(text).toContain(JSON.stringify(header!.split('\n')[1]).slice(1, -1));
    }
  });

  it('an answer cut before its last section is kept, the sections it never reached extracted from the source: one call, no fallback', async () => {
    const { jobId, chunks } = await planned('truncated-once');
    // the truncated fault cuts the answer at half its length: its later sections never came
    sim.control.setFaults({ script: ['truncated'] });
    await runChunks(jobId, 1);
    expect(bodies()).toHaveLength(1);
    const budget = chunks[0]!.outputBudget;
    expect(bodies()[0]?.max_tokens).toBe(capOf(budget));
    expect(requestedLengthTokens(lastText(bodies()[0]))).toBe(askedFor(budget));
    const [row] = await listChunks(deps.db, jobId);
    expect(row).toMatchObject({ status: 'done', fallback: null, calls: 1 });
    const [call] = sim.control.callLog();
    expect(call?.stop).toBe('length');
    // what the model wrote opens the summary verbatim (up to its last complete line); the seven sections follow
    expect(row?.summary?.startsWith(completeLines(call!.answerText!).split('\n').slice(0, -1).join('\n'))).toBe(true);
    expect(holdsEverySection(row?.summary ?? '')).toBe(true);
    // the cut answer was billed
    expect(row?.usage?.outputTokens).toBe(call!.outputTokens);
  });

  it('an answer overrunning its length by a third is not cut: one call, no fallback', async () => {
    sim.control.configure({ overrun: { rate: 1, factor: 1.4 } });
    const { jobId, chunks } = await planned('overrun-third');
    await runChunks(jobId, chunks.length);
    const log = sim.control.callLog();
    expect(log).toHaveLength(chunks.length);
    expect(log.every((call) => call.overrun && call.outputTokens <= call.maxTokens)).toBe(true);
    // it did run past what the directive asked for
    expect(log.some((call) => call.outputTokens > (call.requestedTokens ?? Infinity))).toBe(true);
    const done = await listChunks(deps.db, jobId);
    expect(done.every((c) => c.status === 'done' && c.fallback === null && c.calls === 1)).toBe(true);
  });

  it('under identifierRepair: call, sends the draft and the missing list only, and keeps the draft', async () => {
    sim.control.configure({ lossRate: 0.5 });
    const { jobId, chunks } = await planned('repair', { ...POLICY, identifierRepair: 'call', maxIdentifiers: 1 });
    await runChunks(jobId, 1);
    const [first, repair] = bodies();
    expect(repair, 'a repair call follows a lossy answer').toBeDefined();
    const repairText = JSON.stringify(repair?.messages);
    expect(repairText.length).toBeLessThan(JSON.stringify(first?.messages).length);
    expect(repair!.max_tokens).toBeLessThan(chunks[0]!.outputBudget * 2);
    const [row] = await listChunks(deps.db, jobId);
    expect(row?.draft).not.toBeNull();
    expect(row?.calls).toBe(2);
  });
});

describe('finalize and the commit', () => {
  it('commits the level-0 batches and reports retention over the whole span, measured in the context', async () => {
    const { jobId, chunks } = await planned('commit');
    await runChunks(jobId, chunks.length);
    await processFinalize({ jobId }, deps);
    const job = await getJob(deps.db, jobId);
    expect(job?.status).toBe('completed');
    const union = new Set((await listChunks(deps.db, jobId)).flatMap((c) => c.identifiers));
    const identifiers = job?.result?.['identifiers'] as { found: number; total: number };
    expect(identifiers.total).toBe(union.size);
    expect(identifiers.found).toBeGreaterThan(0);
    expect(identifiers.found).toBeLessThanOrEqual(union.size);
    expect((job?.result?.['batchIds'] as string[]).length).toBe(chunks.length);
    const active = await activeMessages(stack, 'commit');
    const clip = active.find((m) => m.kind === 'clip_archive');
    const clipText = (clip?.content as Array<{ text: string }>)[0]!.text;
    // one account: the state of the work first, then the summaries, then the recall line
    expect(clipText.indexOf('<compactd-state>')).toBeGreaterThan(0);
    expect(clipText.indexOf('<compactd-state>')).toBeLessThan(clipText.indexOf('<compactd-summary'));
    expect(clipText).toMatch(/archived verbatim in \d+ batch(es)?; `recall` finds any of them/);
    // figures measured on what the commit wrote
    const result = job?.result as {
      context: { tokens: number; clipArchiveTokens: number };
      ledger: { files: number };
      forgotten: { total: number };
    };
    const [stored] = await deps.db.execute<{ total: number; clip: number }>(sql`
      select sum(m.tokens)::int as total, sum(m.tokens) filter (where m.kind = 'clip_archive')::int as clip
        from messages m join conversations c on c.id = m.conversation_id where c.external_id = 'commit'`);
    expect(result.context).toEqual({ tokens: stored?.total, clipArchiveTokens: stored?.clip });
    expect(result.ledger.files).toBeGreaterThan(0);
    const forgotten = await stack.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}/forgotten`, headers: stack.auth() });
    expect(forgotten.statusCode, forgotten.body).toBe(200);
    const body = forgotten.json() as { recorded: boolean; total: number; names: Array<{ name: string; recall: string }> };
    expect(body).toMatchObject({ recorded: true, total: result.forgotten.total });
    for (const { name } of body.names) expect(JSON.stringify(active)).not.toContain(JSON.stringify(name).slice(1, -1));
    expect(body.names.every((n) => n.recall.startsWith('/v1/conversations/commit/archive/search?q='))).toBe(true);
  });

  it('records a consolidation in the commit when batches exceed maxLiveBatches; it commits in its own transaction and a revert undoes both', async () => {
    const before = await (async () => {
      // a clip-archive budget out of reach: only the batch count asks for this consolidation
      await seedConversation(stack, 'consolidate', session(), { policy: { ...POLICY, maxLiveBatches: 2, clipArchiveMaxTokens: 100_000 } });
      return activeMessages(stack, 'consolidate');
    })();
    const job = await compact(stack, 'consolidate', { strategy: 'summarize' });
    await processPlan({ jobId: job.id }, deps);
    const chunks = await listChunks(deps.db, job.id);
    expect(chunks.length).toBeGreaterThan(2);
    await runChunks(job.id, chunks.length);
    await processFinalize({ jobId: job.id }, deps);
    const compaction = await getJob(deps.db, job.id);
    expect(compaction?.status).toBe('completed');
    const consolidationId = compaction?.result?.['consolidationJobId'] as string;
    expect(consolidationId).toBeTruthy();
    expect((await getJob(deps.db, consolidationId))?.trigger).toBe('consolidate');

    sim.control.reset();
    // a re-summary answer cut before its last section: kept and completed, never asked again nor replaced by the fallback
    sim.control.setFaults({ script: ['truncated'] });
    await processPlan({ jobId: consolidationId }, deps);
    const [merge] = await listChunks(deps.db, consolidationId);
    expect(merge?.absorbedBatchIds.length).toBe(chunks.length - 1);
    // within what the merged summary is worth, and within what the clip-archive budget leaves it
    expect(merge?.outputBudget).toBe(
      consolidationOutputBudget(mergePolicy({ ...POLICY, maxLiveBatches: 2, clipArchiveMaxTokens: 100_000 }), merge!.sourceTokens),
    );
    await processSummarizeChunk({ jobId: consolidationId, chunkIndex: 0 }, deps);
    await processFinalize({ jobId: consolidationId }, deps);
    const consolidation = await getJob(deps.db, consolidationId);
    expect(consolidation?.status).toBe('completed');
    // a consolidation's cap stays its budget's: it is what fits the clip-archive back within its budget
    expect(bodies().map((b) => b.max_tokens)).toEqual([capOf(merge!.outputBudget)]);
    expect(bodies().map((b) => requestedLengthTokens(lastText(b)))).toEqual([askedFor(merge!.outputBudget)]);
    expect(holdsEverySection((await listChunks(deps.db, consolidationId))[0]?.summary ?? '')).toBe(true);
    expect(consolidation?.result?.['fallbacks']).toEqual([]);
    const identifiers = consolidation?.result?.['identifiers'] as { found: number; total: number };
    expect(identifiers.found).toBeLessThanOrEqual(identifiers.total);
    // the merged batch carries the exact merge of the absorbed batches' ledgers
    const [mergedChunk] = await listChunks(deps.db, consolidationId);
    const summarized = await listChunks(deps.db, job.id);
    const absorbedFiles = new Set(
      summarized.slice(0, merge!.absorbedBatchIds.length).flatMap((c) => LedgerSchema.parse(c.ledger).files.map((f) => f.path)),
    );
    expect(new Set(LedgerSchema.parse(mergedChunk?.ledger).files.map((f) => f.path))).toEqual(absorbedFiles);

    const live = await deps.db.execute<{
      n: number;
    }>(sql`select count(*)::int as n from batches b join conversations c on c.id = b.conversation_id
      where c.external_id = 'consolidate' and b.superseded_by is null`);
    expect(live[0]?.n).toBe(2);
    const clips = (await activeMessages(stack, 'consolidate')).filter((m) => m.kind === 'clip_archive');
    expect(clips).toHaveLength(1);
    expect(clips[0]?.seq).toBe(compaction?.result?.['clipArchiveSeq']);

    const reverted = await stack.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/revert`, headers: stack.auth() });
    expect(reverted.statusCode, reverted.body).toBe(200);
    expect((await getJob(deps.db, consolidationId))?.result?.['revertedAt']).toBeDefined();
    expect(await activeMessages(stack, 'consolidate')).toEqual(before);
  });
});

describe('the clip-archive budget (SPEC §5.7)', () => {
  it('a compaction that leaves the clip-archive over its budget records a consolidation that merges every batch within it', async () => {
    // batches far below their maximum count: only the budget asks for this consolidation
    const policy = { ...POLICY, clipArchiveMaxTokens: 2_500, ledgerMaxTokens: 800, maxLiveBatches: 100 };
    await seedConversation(stack, 'over-budget', session(), { policy });
    const job = await compact(stack, 'over-budget', { strategy: 'summarize' });
    await processPlan({ jobId: job.id }, deps);
    const chunks = await listChunks(deps.db, job.id);
    await runChunks(job.id, chunks.length);
    await processFinalize({ jobId: job.id }, deps);
    const compaction = await getJob(deps.db, job.id);
    const first = compaction?.result as { context: { clipArchiveTokens: number }; consolidationJobId: string | null };
    expect(first.context.clipArchiveTokens).toBeGreaterThan(policy.clipArchiveMaxTokens);
    expect(first.consolidationJobId).toBeTruthy();

    await processPlan({ jobId: first.consolidationJobId! }, deps);
    const [merge] = await listChunks(deps.db, first.consolidationJobId!);
    expect(merge?.absorbedBatchIds).toHaveLength(chunks.length);
    await processSummarizeChunk({ jobId: first.consolidationJobId!, chunkIndex: 0 }, deps);
    await processFinalize({ jobId: first.consolidationJobId! }, deps);
    const consolidation = await getJob(deps.db, first.consolidationJobId!);
    expect(consolidation?.status).toBe('completed');
    const after = consolidation?.result as { context: { clipArchiveTokens: number }; ledger: { files: number } };
    expect(after.context.clipArchiveTokens).toBeLessThanOrEqual(policy.clipArchiveMaxTokens);
    expect(after.ledger.files).toBeGreaterThan(0);
    const clips = (await activeMessages(stack, 'over-budget')).filter((m) => m.kind === 'clip_archive');
    expect(clips).toHaveLength(1);
  });
});

describe('the outbox (SPEC §5.5 step 3)', () => {
  it('writes the terminal event with the commit: a worker that dies right after it loses nothing', async () => {
    await seedConversation(stack, 'outbox', session(), { policy: POLICY });
    const hook = await stack.app.inject({
      method: 'PUT',
      url: '/v1/conversations/outbox/webhook',
      headers: stack.auth(),
      payload: { url: 'https://hooks.example/outbox' },
    });
    expect(hook.statusCode, hook.body).toBe(200);
    const job = await compact(stack, 'outbox', { strategy: 'summarize' });
    await processPlan({ jobId: job.id }, deps);
    const chunks = await listChunks(deps.db, job.id);
    await runChunks(job.id, chunks.length);
    // these deps have no onJobFinished: nothing runs after the commit, as when the process dies there
    await processFinalize({ jobId: job.id }, deps);
    const rows = await deps.db.execute<{ event: string; status: string; body: string }>(sql`
      select event, status, body from webhook_deliveries d join conversations c on c.id = d.conversation_id where c.external_id = 'outbox'`);
    expect(rows.map((r) => [r.event, r.status])).toEqual([['compaction.completed', 'pending']]);
    expect(JSON.parse(rows[0]!.body).data.job).toMatchObject({ id: job.id, status: 'completed' });
  });

  it('records the cancellation event with the cancel', async () => {
    await seedConversation(stack, 'outbox-cancel', session(), { policy: POLICY });
    await stack.app.inject({
      method: 'PUT',
      url: '/v1/conversations/outbox-cancel/webhook',
      headers: stack.auth(),
      payload: { url: 'https://hooks.example/cancel' },
    });
    const job = await compact(stack, 'outbox-cancel', { strategy: 'summarize' });
    const cancelled = await stack.app.inject({ method: 'DELETE', url: `/v1/jobs/${job.id}`, headers: stack.auth() });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    const rows = await deps.db.execute<{ event: string }>(sql`
      select event from webhook_deliveries d join conversations c on c.id = d.conversation_id where c.external_id = 'outbox-cancel'`);
    expect(rows.map((r) => r.event)).toEqual(['compaction.cancelled']);
  });
});
