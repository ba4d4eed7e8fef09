import { countTokens } from 'gpt-tokenizer';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { loadRealTranscript } from '../../../harness/transcripts.js';
import { waitFor } from '../../../harness/wait-for.js';
import { chunkOutputBudget, outputCap } from '../../../src/compaction/plan/budget.js';
import { buildSummarizeRequest, rankChunkIdentifiers } from '../../../src/compaction/summarize/index.js';
import type { HistoryMessage } from '../../../src/compaction/types.js';
import { loadConfig } from '../../../src/config/env.js';
import { mergePolicy } from '../../../src/config/policy.js';
import { createSummarizers } from '../../../src/llm/create-summarizer.js';
import { HEDGE_MIN_MS, PaceBook } from '../../../src/llm/hedge-timing.js';
import { outputLimitFor } from '../../../src/llm/models.js';
import { summarizeGuarded } from '../../../src/worker/guarded-summary.js';

/**
 * The summary step's provider answer through the real Anthropic adapter (official SDK, retry
 * layer) against llm-sim: a straggling call gets a hedged second request raced beside it and
 * is cancelled when the hedge answers; both calls are counted; nothing runs in series.
 */

const MODEL = 'claude-haiku-4-5';
let sim: TestLlmSim;
beforeAll(async () => {
  sim = await startTestLlmSim();
});
afterAll(async () => {
  await sim?.close();
});
beforeEach(() => {
  sim.control.reset();
  sim.control.configure({ profile: 'fixed:300', faults: {}, overrun: { rate: 0 } });
});

const policy = mergePolicy({ chunkTokens: 4000 });
const messages: HistoryMessage[] = loadRealTranscript('spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl')
  .conversations[0]!.messages.filter((m) => m.role !== 'system')
  .slice(0, 30)
  .map((m, i) => ({
    seq: i + 1,
    role: m.role,
    kind: 'message',
    content: m.content,
    tokens: countTokens(JSON.stringify(m.content)),
    toolUseIds: m.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])),
    toolResultIds: m.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])),
  }));
const budget = chunkOutputBudget(policy, 4000);

function summarize(paces: PaceBook, signal = new AbortController().signal) {
  const summarizers = createSummarizers(loadConfig({ ANTHROPIC_BASE_URL: sim.url, COMPACTD_LLM_MAX_ATTEMPTS: '2' }));
  return summarizeGuarded({
    buildRequest: (target, cap) =>
      buildSummarizeRequest(messages, null, policy, {
        countTokens,
        fenceId: 'feedc0de00000001',
        maxOutputTokens: target,
        ...(cap === undefined ? {} : { capTokens: cap }),
      }),
    budget,
    identifiers: rankChunkIdentifiers(messages).ordered,
    selection: { provider: 'anthropic', model: MODEL },
    summarizers,
    policy,
    signal,
    paces,
  });
}

/** A pace as fast as the sim's fixed:300 answers: the hedge waits only its floor. */
function fastPaces(): PaceBook {
  const paces = new PaceBook();
  paces.observe('anthropic', MODEL, 50, 500);
  return paces;
}

describe('hedged second request for a straggling summary call', () => {
  it('a call that answers in time is the only one', async () => {
    const result = await summarize(fastPaces());
    const log = sim.control.callLog();
    expect(log).toHaveLength(1);
    expect(log[0]!.maxTokens).toBe(outputCap(budget, outputLimitFor(MODEL)));
    expect(result).toMatchObject({ calls: 1, fallback: null, provider: 'anthropic' });
  });

  it('a hanging call gets a second request raced beside it after the hedge delay; the first is cancelled when it answers', async () => {
    sim.control.setFaults({ script: ['hang'] });
    const started = performance.now();
    const result = await summarize(fastPaces());
    const wall = performance.now() - started;
    expect(result.fallback).toBeNull();
    expect(result.summary).toContain('## NEXT STEPS');
    // both calls were made and are counted; the cancelled one reported no usage, the winner's is the step's
    expect(result.calls).toBe(2);
    const log = sim.control.callLog();
    expect(log).toHaveLength(2);
    const [first, hedge] = log;
    expect(hedge!.startMs - first!.startMs).toBeGreaterThanOrEqual(HEDGE_MIN_MS - 50);
    expect(result.usage.outputTokens).toBe(hedge!.outputTokens);
    // raced, not in series: the hedge started while the first was still in flight, which ended when the hedge answered
    await waitFor(() => sim.control.callLog()[0]?.outcome !== 'pending', 5_000, 25, 'the losing call to end');
    const settled = sim.control.callLog();
    expect(settled[0]!.outcome).toBe('disconnected');
    expect(settled[1]!.startMs).toBeLessThan(settled[0]!.endMs!);
    expect(settled[0]!.endMs! - settled[1]!.endMs!).toBeLessThan(200);
    expect(wall).toBeLessThan(HEDGE_MIN_MS + 300 + 1_000);
  });

  it('a cancelled step cancels both requests', async () => {
    sim.control.setFaults({ script: ['hang', 'hang'] });
    const controller = new AbortController();
    const pending = summarize(fastPaces(), controller.signal);
    await waitFor(() => sim.control.inFlight() === 2, HEDGE_MIN_MS + 5_000, 25, 'the hedge to start beside the hanging call');
    controller.abort();
    await expect(pending).rejects.toMatchObject({ kind: 'cancelled' });
    await waitFor(() => sim.control.inFlight() === 0, 5_000, 25, 'both requests to end');
  });
});
