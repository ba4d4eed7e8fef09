import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { loadRealTranscript } from '../../../harness/transcripts.js';
import { waitFor } from '../../../harness/wait-for.js';
import { serveMetrics } from '../../../src/app/metrics-server.js';
import { compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

const MODEL = 'claude-haiku-4-5';
const logLines: Array<Record<string, unknown>> = [];

let sim: TestLlmSim;
let stack: Stack;
beforeAll(async () => {
  sim = await startTestLlmSim();
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) });
  stack = await createStack({ env: { ANTHROPIC_BASE_URL: sim.url, COMPACTD_SUMMARIZER: `anthropic:${MODEL}` }, logger });
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
});

/** The value of one series in the text format (labels matched as a subset). */
function series(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const values = text
    .split('\n')
    .map((line) => /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && m[1] === name && wanted.every((w) => (m[2] ?? '').split(',').includes(w)))
    .map((m) => Number(m[3]));
  return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0);
}

describe('metrics and logs after a compaction through a provider', () => {
  type Llm = { calls: number; inputTokens: number; outputTokens: number; costUsd: number };
  type JobView = {
    id: string;
    status: string;
    progress: { chunksTotal: number };
    result: { consolidationJobId: string; tokensBefore: number; tokensAfter: number; llm: Llm };
  };
  let done: JobView;
  /** the follow-up consolidation the compaction recorded (the session makes more than maxLiveBatches batches) */
  let consolidation: JobView;
  let text: string;
  beforeAll(async () => {
    const session = loadRealTranscript('spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl').conversations[0]!.messages;
    await seedConversation(stack, 'metered', session, { policy: { auto: false, summaryMaxTokens: 4000 } });
    done = await waitForJob(stack, (await compact(stack, 'metered', { strategy: 'summarize' })).id);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(done.result.consolidationJobId).toBeTruthy();
    consolidation = await waitForJob(stack, done.result.consolidationJobId);
    expect(consolidation.status, JSON.stringify(consolidation)).toBe('completed');
    // a finalize step is timed when it returns: after its commit completed the job and after the
    // recall index it writes once committed, so the second may still be running here
    const read = async () => (text = (await stack.app.inject({ method: 'GET', url: '/metrics' })).body);
    await waitFor(
      async () => series(await read(), 'compactd_phase_duration_seconds_count', { phase: 'finalize', outcome: 'ok' }) === 2,
      20_000,
      50,
      'both finalize steps timed',
    );
  });

  it('counts the job by status and trigger and the tokens it saved', () => {
    expect(series(text, 'compactd_jobs_finished_total', { status: 'completed', trigger: 'api' })).toBe(1);
    expect(series(text, 'compactd_tokens_saved_total', { trigger: 'api' })).toBe(done.result.tokensBefore - done.result.tokensAfter);
    expect(series(text, 'compactd_jobs_finished_total', { status: 'completed', trigger: 'consolidate' })).toBe(1);
  });

  it('times every phase of the job', () => {
    // the compaction's steps, then its consolidation's (one plan, one merge, one finalize)
    expect(series(text, 'compactd_phase_duration_seconds_count', { phase: 'plan', outcome: 'ok' })).toBe(2);
    expect(series(text, 'compactd_phase_duration_seconds_count', { phase: 'summarize', outcome: 'ok' })).toBe(
      done.progress.chunksTotal + 1,
    );
    expect(series(text, 'compactd_phase_duration_seconds_count', { phase: 'finalize', outcome: 'ok' })).toBe(2);
    expect(series(text, 'compactd_phase_duration_seconds_sum', { phase: 'summarize' })).toBeGreaterThan(0);
  });

  it('reports LLM requests, latency, tokens and cost by provider and model, matching the job result', () => {
    const labels = { provider: 'anthropic', model: MODEL };
    const [a, b] = [done.result.llm, consolidation.result.llm];
    const llm = {
      calls: a.calls + b.calls,
      inputTokens: a.inputTokens + b.inputTokens,
      outputTokens: a.outputTokens + b.outputTokens,
      costUsd: a.costUsd + b.costUsd,
    };
    expect(series(text, 'compactd_llm_requests_total', { ...labels, outcome: 'ok' })).toBe(llm.calls);
    expect(series(text, 'compactd_llm_request_duration_seconds_count', labels)).toBe(llm.calls);
    expect(series(text, 'compactd_llm_tokens_total', { ...labels, kind: 'input' })).toBe(llm.inputTokens);
    expect(series(text, 'compactd_llm_tokens_total', { ...labels, kind: 'output' })).toBe(llm.outputTokens);
    expect(series(text, 'compactd_llm_cost_usd_total', labels)).toBeCloseTo(llm.costUsd, 5);
    expect(llm.costUsd).toBeGreaterThan(0);
  });

  it('reports queue depths and HTTP latency by route', () => {
    for (const queue of ['compaction', 'summarize', 'maintenance', 'webhooks']) {
      expect(series(text, 'compactd_queue_jobs', { queue, state: 'wait' })).toBeDefined();
    }
    expect(
      series(text, 'compactd_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v1/conversations/:id/compactions',
        status_code: '202',
      }),
    ).toBe(1);
    expect(
      series(text, 'compactd_http_request_duration_seconds_count', { method: 'GET', route: '/v1/jobs/:id', status_code: '200' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('binds job, conversation and tenant ids to every log line about the job', () => {
    const jobLines = logLines.filter((line) => line['jobId'] === done.id);
    expect(jobLines.map((line) => line['msg'])).toEqual(expect.arrayContaining(['compaction planned', 'compaction completed']));
    for (const line of jobLines) {
      expect(line, JSON.stringify(line)).toMatchObject({ conversationId: 'metered', tenantId: expect.any(String) });
    }
  });

  it('serves the same registry from a worker-only process port, with its optional token', async () => {
    const server = await serveMetrics(stack.deps.metrics.registry, { host: '127.0.0.1', port: 0, token: 'worker-metrics-token' });
    try {
      expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
      const res = await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer worker-metrics-token' } });
      expect(res.status).toBe(200);
      expect(series(await res.text(), 'compactd_jobs_finished_total', { status: 'completed', trigger: 'api' })).toBe(1);
      expect((await fetch(`${server.url}/other`, { headers: { authorization: 'Bearer worker-metrics-token' } })).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
