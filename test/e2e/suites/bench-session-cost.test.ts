import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type BenchContext, makeUniqueId } from '../../../bench/lib/context.js';
import { type BenchServices, startServices } from '../../../bench/lib/services.js';
import { type BenchResults, renderMarkdown } from '../../../bench/report/markdown.js';
import { COST_TABLE, renderSessionCostChart } from '../../../bench/report/session-cost-svg.js';
import type { ArmKey, ArmRun } from '../../../bench/scenarios/session-cost/arm.js';
import { replaySessions, sessionCostOptions, sessionCostResult } from '../../../bench/scenarios/session-cost/index.js';
import { armFigures } from '../../../bench/scenarios/session-cost/report.js';
import { findModel } from '../../../src/llm/models.js';
import type { CallRecord } from '../../../src/llm-sim/state.js';

/**
 * The bench scenario "a session's cost" in its quick variant (the first long Claude Code
 * session, truncated), against the real compactd processes, llm-sim and the Anthropic SDK:
 * every figure must come out of the sim's call log — costs as billed usage × the registry's
 * prices, the single call reading the agent's cache, the cut never waiting and never sending
 * more than the window.
 */

let svc: BenchServices;

beforeAll(async () => {
  svc = await startServices();
}, 120_000);

afterAll(async () => {
  await svc?.close();
});

/** Usage × list prices, written out here rather than through the bench's pricing code. */
function listPriceUsd(calls: readonly CallRecord[]): number {
  return calls.reduce((sum, call) => {
    const prices = findModel(call.model)?.prices;
    if (!prices) throw new Error(`no registry price for ${call.model}`);
    const { input, cacheRead, cacheWrite, output } = call.usage;
    return (
      sum + (input * prices.input + cacheRead * prices.cacheRead + cacheWrite * prices.cacheWrite + output * prices.output) / 1_000_000
    );
  }, 0);
}

describe('bench: a session’s cost (quick variant)', () => {
  it('prices every arm from the sim’s log and measures waits and probe scores', { timeout: 400_000 }, async () => {
    const ctx: BenchContext = {
      svc,
      quick: true,
      profileDir: '',
      chart: [],
      log: () => {},
      uniqueId: makeUniqueId(`e2e${Date.now()}`),
      only: null,
    };
    const options = sessionCostOptions(true);
    const sessions = await replaySessions(ctx, options);
    expect(sessions).toHaveLength(1);
    const [session] = sessions;
    if (!session) throw new Error('no session replayed');
    const run = (key: ArmKey): ArmRun => {
      const found = session.runs.find((r) => r.arm.key === key);
      if (!found) throw new Error(`arm ${key} missing`);
      return found;
    };
    for (const key of ['cut', 'parallel', 'auto', 'single-call'] as const)
      expect(run(key).status, `${key}: ${run(key).reason ?? ''}`).toBe('measured');

    // b: the cost is the sum of its calls' billed usage × prices, the summarizer's calls included
    const parallel = run('parallel');
    const compactionCalls = parallel.calls.filter((c) => !parallel.agentCallIds.has(c.id));
    expect(compactionCalls.length).toBeGreaterThan(0);
    expect(new Set(compactionCalls.map((c) => c.model))).toEqual(new Set(['claude-haiku-4-5']));
    expect(parallel.agentCallIds.size).toBe(parallel.turns);
    const figures = armFigures(parallel);
    expect(figures.totalUsd).toBeGreaterThan(0);
    expect(figures.totalUsd).toBeCloseTo(listPriceUsd(parallel.calls), 9);
    expect(figures.compaction.usd).toBeCloseTo(listPriceUsd(compactionCalls), 9);
    // the agent's calls read their cached prefix turn after turn
    expect(figures.agent.tokens.cacheRead).toBeGreaterThan(figures.agent.tokens.cacheWrite);

    // compactd compacted in the background: under the window when it started, so no wait; its context was scored
    for (const key of ['parallel', 'auto'] as const) {
      const events = run(key).compactions;
      expect(events.length, key).toBeGreaterThan(0);
      for (const event of events.filter((e) => !e.overWindow)) expect(event.waitMs, key).toBe(0);
      const scored = events.find((e) => e.probe !== null);
      expect(scored?.probe?.total ?? 0, key).toBeGreaterThan(0);
      expect(scored?.tokensAfter ?? Infinity, key).toBeLessThan(scored?.tokensAtStart ?? 0);
    }

    // e: one compaction call, which read exactly the prefix the agent's previous turn had cached, and a wait as long as it
    const single = run('single-call');
    const singleCalls = single.calls.filter((c) => !single.agentCallIds.has(c.id));
    expect(singleCalls).toHaveLength(1);
    const [compaction] = singleCalls;
    if (!compaction) throw new Error('no single-call compaction');
    const previousTurn = single.calls.filter((c) => single.agentCallIds.has(c.id) && c.id < compaction.id).at(-1);
    expect(compaction.usage.cacheRead).toBeGreaterThan(0);
    expect(compaction.usage.cacheRead).toBe(previousTurn?.inputTokens);
    // most of its input: the rest is the turn added since and the summary instruction
    expect(compaction.usage.cacheRead).toBeGreaterThan(0.5 * compaction.inputTokens);
    expect(single.compactions[0]?.waitMs ?? 0).toBeGreaterThan(0);
    expect(armFigures(single).compaction.usd).toBeCloseTo(listPriceUsd(singleCalls), 9);

    // a: never waits, never sends more than the window as the sim counts it, and reached it
    const cut = run('cut');
    expect(cut.compactions.every((e) => e.waitMs === 0)).toBe(true);
    const sent = cut.calls.map((c) => c.inputTokens);
    expect(Math.max(...sent)).toBeLessThanOrEqual(session.windowTokens);
    expect(Math.max(...sent)).toBeGreaterThan(0.95 * session.windowTokens);
    expect(cut.calls.every((c) => cut.agentCallIds.has(c.id))).toBe(true);

    // c: measured once the strategy exists, else said why
    const native = run('native');
    if (native.status === 'not measured') expect(native.reason).toContain('strategy native not available');

    // the report: the cost table holds the figures, and the plot and the markdown show them
    const result = sessionCostResult(options, sessions);
    const table = result.tables.find((t) => t.title === COST_TABLE.title);
    const row = table?.rows.find((r) => r[1] === parallel.arm.label);
    expect(row?.[COST_TABLE.columns.indexOf('total $')]).toBeCloseTo(figures.totalUsd, 3);
    expect(result.targets.length).toBeGreaterThanOrEqual(3);
    for (const t of result.targets) if (!t.met) expect(t.bottleneck?.length ?? 0, t.metric).toBeGreaterThan(20);
    const svg = renderSessionCostChart(result, 'quick');
    expect(svg).toContain(parallel.arm.label);
    const results: BenchResults = {
      version: 1,
      mode: 'quick',
      startedAt: new Date().toISOString(),
      durationS: 1,
      machine: { cpus: 2, cpuModel: 'x', memoryGb: 1, node: process.version, platform: 'linux' },
      chart: [],
      scenarios: [result],
    };
    const markdown = renderMarkdown(results, { svg: 'latency.svg', json: 'r.json', sessionCostSvg: 'session-cost.svg' });
    expect(markdown).toContain('![a session’s cost per arm](session-cost.svg)');
  });
});
