import Anthropic from '@anthropic-ai/sdk';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { loadRealTranscript } from '../../../harness/transcripts.js';
import { listChunks } from '../../../src/db/repos/chunks.js';
import { getJob } from '../../../src/db/repos/jobs.js';
import { ANTHROPIC_COMPACTION_BETA } from '../../../src/llm/native-port.js';
import type { WorkerDeps } from '../../../src/worker/deps.js';
import { processFinalize } from '../../../src/worker/processors/finalize.js';
import { processPlan } from '../../../src/worker/processors/plan.js';
import { processSummarizeChunk } from '../../../src/worker/processors/summarize.js';
import { activeMessages, compact, seedConversation } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';
import { workerStepDeps } from '../../helpers/worker-steps.js';

/**
 * Strategy native (SPEC §5.10) through the worker's real steps, against llm-sim's emulation of
 * Anthropic's on-demand compaction and OpenAI's /responses/compact: one provider call, its item
 * kept exactly as returned on the clip-archive, the context opening with it for that model and
 * accepted by the provider's validation on the next request, compactd's own clip-archive for
 * every other reader, and revert restoring the originals.
 */

let sim: TestLlmSim;
let stack: Stack;
let deps: WorkerDeps;
beforeAll(async () => {
  sim = await startTestLlmSim();
  stack = await createStack({
    workers: false,
    env: { ANTHROPIC_BASE_URL: sim.url, OPENAI_BASE_URL: sim.openaiBaseUrl, COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5' },
  });
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
const POLICY = { auto: false };
const SONNET = 'claude-sonnet-4-5';
const AGENT_SYSTEM = 'You are a coding agent working in a repository.';
const TOOLS = [
  { name: 'Bash', description: 'Runs a shell command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } },
];

async function runJob(jobId: string): Promise<void> {
  await processPlan({ jobId }, deps);
  const chunks = await listChunks(deps.db, jobId);
  await Promise.all(chunks.map((chunk) => processSummarizeChunk({ jobId, chunkIndex: chunk.idx }, deps)));
  await processFinalize({ jobId }, deps);
}

const contextOf = async (id: string, query: string) => {
  const res = await stack.app.inject({ method: 'GET', url: `/v1/conversations/${id}/context?${query}`, headers: stack.auth() });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{
    system?: string;
    messages: Array<{ role: string; content: Array<Record<string, unknown>> }>;
    anthropicBeta?: string;
  }>();
};

describe('strategy native on Anthropic (on-demand compaction)', () => {
  let jobId: string;
  let before: number;
  let calls: ReturnType<TestLlmSim['control']['callLog']>;
  beforeAll(async () => {
    sim.control.reset();
    sim.control.setProfile('instant');
    await seedConversation(stack, 'native-a', session(), {
      model: SONNET,
      policy: { ...POLICY, summaryInstructions: 'Keep every ticket id (BD-123 style).' },
    });
    before = (await activeMessages(stack, 'native-a')).length;
    const job = await compact(stack, 'native-a', {
      strategy: 'native',
      agent: { provider: 'anthropic', model: SONNET, system: AGENT_SYSTEM, tools: TOOLS },
    });
    jobId = job.id;
    await runJob(jobId);
    calls = sim.control.callLog();
  });

  it('makes one provider compaction call with the agent system, tools and the beta header, and commits', async () => {
    const job = await getJob(deps.db, jobId);
    expect(job?.status, JSON.stringify(job?.error)).toBe('completed');
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call?.compaction).toBe('summarize');
    expect(call?.model).toBe(SONNET);
    expect(call?.headers?.['anthropic-beta']).toContain(ANTHROPIC_COMPACTION_BETA);
    const body = call?.body as {
      system: unknown;
      tools: unknown;
      compaction: { type: string; instructions?: string };
      messages: Array<{ content: Array<Record<string, unknown>> }>;
    };
    expect(JSON.stringify(body.system)).toContain(AGENT_SYSTEM);
    expect(body.tools).toEqual(TOOLS);
    expect(body.compaction.type).toBe('summarize');
    // the operator's instructions steer the provider's summary, fenced as in chunk calls
    expect(body.compaction.instructions).toContain('Keep every ticket id (BD-123 style).');
    // a breakpoint on the last block, as the agent marks its own requests: the agent's cached prefix is read
    expect(body.messages.at(-1)?.content.at(-1)?.['cache_control']).toEqual({ type: 'ephemeral' });
    const result = job?.result as Record<string, unknown>;
    expect(result['strategy']).toBe('native');
    expect((result['decision'] as { reason: string }).reason).toMatch(/native was asked for/);
    // the job's cost is the call's usage at the registry's prices
    const llm = result['llm'] as { calls: number; inputTokens: number; costUsd: number };
    expect(llm.calls).toBe(1);
    expect(llm.costUsd).toBeGreaterThan(0);
    // what the compaction does to the agent's own cache, at Sonnet's prices
    const cache = result['agentCache'] as { invalidatedTokens: number; nextRequestUsd: number; laterRequestUsd: number };
    expect(cache.invalidatedTokens).toBe(result['tokensBefore']);
    expect(cache.nextRequestUsd).toBeCloseTo((Number(result['tokensAfter']) * 3.75) / 1_000_000, 6);
    expect(cache.laterRequestUsd).toBeLessThan(cache.nextRequestUsd);
  });

  it('opens the context with the provider block for its model, accepted by the provider on the next request', async () => {
    const [chunk] = await listChunks(deps.db, jobId);
    const item = chunk?.providerItem?.item;
    expect(item?.['type']).toBe('compaction');
    const context = await contextOf('native-a', `format=anthropic&model=${SONNET}`);
    expect(context.messages[0]?.content[0]).toEqual(item);
    expect(context.anthropicBeta).toBe(ANTHROPIC_COMPACTION_BETA);
    // compactd's narrative is not sent twice: the system prompt holds no batch summary
    expect(context.system ?? '').not.toContain(String(item?.['content']).slice(0, 80));
    const client = new Anthropic({ apiKey: 'test', baseURL: sim.url, maxRetries: 0 });
    const answer = await client.messages.create(
      {
        model: SONNET,
        max_tokens: 256,
        system: [AGENT_SYSTEM, context.system].filter(Boolean).join('\n\n'),
        messages: [...context.messages, { role: 'user', content: 'What should we do next?' }] as Anthropic.Messages.MessageParam[],
      },
      { headers: { 'anthropic-beta': context.anthropicBeta! } },
    );
    expect(answer.content.length).toBeGreaterThan(0);
  });

  it('gives another model, and the OpenAI format, compactd’s own clip-archive', async () => {
    const context = await contextOf('native-a', 'format=anthropic&model=claude-haiku-4-5');
    expect(JSON.stringify(context.messages)).not.toContain('"type":"compaction"');
    expect(context.system).toBeTruthy();
    expect(context.anthropicBeta).toBeUndefined();
    const openai = await contextOf('native-a', 'format=openai');
    expect(JSON.stringify(openai.messages)).not.toContain('"type":"compaction"');
  });

  it('a retried step whose provider call was answered does not pay for it again', async () => {
    await seedConversation(stack, 'native-retry', session().slice(0, 60), { policy: POLICY });
    const job = await compact(stack, 'native-retry', {
      strategy: 'native',
      agent: { provider: 'anthropic', model: SONNET, system: AGENT_SYSTEM },
    });
    await processPlan({ jobId: job.id }, deps);
    expect(sim.control.callLog().filter((c) => c.compaction === 'summarize')).toHaveLength(1);
    const [answered] = await listChunks(deps.db, job.id);
    // the step failed after the call: the chunk is pending again, its memo kept
    await deps.db.execute(sql`update compaction_chunks set status = 'pending', summary = null where job_id = ${job.id}`);
    sim.control.reset();
    await processPlan({ jobId: job.id }, deps);
    expect(sim.control.callLog()).toHaveLength(0);
    const [again] = await listChunks(deps.db, job.id);
    expect(again?.status).toBe('done');
    expect(again?.providerItem).toEqual(answered?.providerItem);
    expect(again?.summary).toBe(answered?.summary);
  });

  it('revert restores the originals', async () => {
    const res = await stack.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/revert`, headers: stack.auth() });
    expect(res.statusCode, res.body).toBe(200);
    expect((await activeMessages(stack, 'native-a')).length).toBe(before);
    const context = await contextOf('native-a', `format=anthropic&model=${SONNET}`);
    expect(JSON.stringify(context.messages)).not.toContain('"type":"compaction"');
  });
});

describe('strategy native on OpenAI (/responses/compact)', () => {
  it('keeps the opaque item and writes compactd’s own summary for the other readers', async () => {
    await seedConversation(stack, 'native-o', session(), { policy: POLICY });
    const job = await compact(stack, 'native-o', {
      strategy: 'native',
      agent: { provider: 'openai', model: 'gpt-4.1-mini', system: AGENT_SYSTEM },
    });
    await runJob(job.id);
    const done = await getJob(deps.db, job.id);
    expect(done?.status, JSON.stringify(done?.error)).toBe('completed');
    const calls = sim.control.callLog();
    expect(calls.map((c) => c.endpoint)).toEqual(['/v1/responses/compact']);
    const [chunk] = await listChunks(deps.db, job.id);
    expect(chunk?.providerItem?.provider).toBe('openai');
    expect(String(chunk?.providerItem?.item['encrypted_content'])).toMatch(/^simenc1\./);
    expect(chunk?.summary?.length).toBeGreaterThan(100);
    const context = await contextOf('native-o', 'format=openai');
    // compactd's clip-archive in place of the span (the user's own messages around it, in order)
    expect(context.messages.some((m) => m.role === 'system')).toBe(true);
    expect(JSON.stringify(context.messages)).not.toContain('encrypted_content');
    // OpenAI's compaction keeps the user's own messages beside its item: they stay active, and the Responses context holds both
    const users = (await activeMessages(stack, 'native-o')).filter((m: { role: string }) => m.role === 'user');
    expect(users.length).toBeGreaterThan(0);
    const responses = (
      await stack.app.inject({
        method: 'GET',
        url: '/v1/conversations/native-o/context?format=responses&model=gpt-4.1-mini',
        headers: stack.auth(),
      })
    ).json<{ input: Array<Record<string, unknown>> }>();
    expect(responses.input.some((item) => item['type'] === 'compaction')).toBe(true);
    expect(responses.input.some((item) => item['role'] === 'user')).toBe(true);
  });
});

describe('the agent setup a compaction asks for', () => {
  const post = (id: string, payload: Record<string, unknown>) =>
    stack.app.inject({ method: 'POST', url: `/v1/conversations/${id}/compactions`, headers: stack.auth(), payload });

  it('keeps to the tenant’s model access (compactd’s key pays the provider) and refuses what it cannot store, naming the field', async () => {
    await seedConversation(stack, 'native-bad', session().slice(0, 10), { policy: POLICY });
    const foreign = await post('native-bad', { strategy: 'native', agent: { provider: 'anthropic', model: 'gpt-4.1-mini' } });
    expect(foreign.statusCode, foreign.body).toBe(403);
    expect(foreign.json()).toMatchObject({ code: 'MODEL_NOT_ALLOWED', errors: [{ field: 'body.agent.model' }] });
    const nul = await post('native-bad', { strategy: 'native', agent: { provider: 'anthropic', model: SONNET, system: 'a\u0000b' } });
    expect(nul.statusCode, nul.body).toBe(400);
    expect(nul.body).toContain('agent');
    const huge = await post('native-bad', {
      strategy: 'native',
      agent: { provider: 'anthropic', model: SONNET, system: 'x'.repeat(300_000) },
    });
    expect(huge.statusCode, huge.body).toBe(400);
    // nothing was started
    const jobs = (await stack.app.inject({ method: 'GET', url: '/v1/conversations/native-bad/jobs', headers: stack.auth() })).json<{
      jobs: unknown[];
    }>();
    expect(jobs.jobs).toHaveLength(0);
  });
});

describe('strategy auto', () => {
  it('runs native in the background when one call fits the budget, and parallel chunks when the agent waits', async () => {
    await seedConversation(stack, 'auto-bg', session().slice(0, 80), { policy: POLICY });
    const agent = { provider: 'anthropic', model: SONNET, system: AGENT_SYSTEM };
    const background = await compact(stack, 'auto-bg', { strategy: 'auto', agent });
    await runJob(background.id);
    const bg = (await getJob(deps.db, background.id))?.result as { strategy: string; decision: { strategy: string; reason: string } };
    expect(bg.decision.strategy).toBe('native');
    expect(bg.strategy).toBe('native');
    expect(bg.decision.reason).toMatch(/within the budget/);

    await seedConversation(stack, 'auto-wait', session().slice(0, 80), { policy: POLICY });
    sim.control.reset();
    const waiting = await compact(stack, 'auto-wait', { strategy: 'auto', agent, agentWaiting: true });
    await runJob(waiting.id);
    const w = (await getJob(deps.db, waiting.id))?.result as { strategy: string; decision: { strategy: string; reason: string } };
    expect(w.decision.reason).toMatch(/agent is waiting/);
    expect(sim.control.callLog().every((c) => c.compaction === null)).toBe(true);
  });

  it('says why when the provider compaction is not available (no agent setup)', async () => {
    await seedConversation(stack, 'auto-none', session().slice(0, 80), { policy: POLICY });
    const job = await compact(stack, 'auto-none', { strategy: 'native' });
    await runJob(job.id);
    const result = (await getJob(deps.db, job.id))?.result as { strategy: string; decision: { strategy: string; reason: string } };
    expect(result.decision.strategy).toBe('summarize');
    expect(result.decision.reason).toMatch(/not known/);
  });
});
