import { describe, expect, it } from 'vitest';

import { outputCap } from '../../../src/compaction/plan/index.js';
import {
  DEFAULT_PACE,
  HEDGE_MIN_MS,
  HEDGE_SLACK,
  HedgeBudget,
  hedgeDelayMs,
  observePace,
  PaceBook,
} from '../../../src/llm/hedge-timing.js';

describe('hedge timing: when a straggling summary call gets a second request beside it', () => {
  it('waits past the time a call at the observed pace would take to write its whole cap', () => {
    // a Haiku-like pace: 840 tokens in 12.6 s → 15 ms per token all told
    const pace = { msPerOutputToken: 15, samples: 5 };
    const cap = outputCap(840, 32_000);
    expect(hedgeDelayMs(cap, pace)).toBe(Math.round(cap * 15 * HEDGE_SLACK));
    // an answer that overruns its length by a third finishes well before: no hedge for it
    expect(hedgeDelayMs(cap, pace)).toBeGreaterThan(840 * (4 / 3) * 15);
  });

  it('never hedges sooner than the floor, and assumes a slow pace before any call was observed', () => {
    expect(hedgeDelayMs(400, { msPerOutputToken: 0.5, samples: 3 })).toBe(HEDGE_MIN_MS);
    expect(hedgeDelayMs(1_388)).toBe(Math.round(1_388 * DEFAULT_PACE.msPerOutputToken * HEDGE_SLACK));
  });

  it('learns the pace from completed calls, weighting the latest; tiny answers say nothing', () => {
    const first = observePace(undefined, 10_000, 1_000);
    expect(first).toEqual({ msPerOutputToken: 10, samples: 1 });
    const second = observePace(first, 20_000, 1_000);
    expect(second?.msPerOutputToken).toBeCloseTo(10 * 0.7 + 20 * 0.3, 10);
    expect(observePace(second, 5_000, 10)).toBe(second);
    expect(observePace(DEFAULT_PACE, 3_000, 300)).toEqual({ msPerOutputToken: 10, samples: 1 });
  });

  it('keeps one pace per provider and model', () => {
    const book = new PaceBook();
    book.observe('anthropic', 'claude-haiku-4-5', 7_000, 700);
    expect(book.get('anthropic', 'claude-haiku-4-5').msPerOutputToken).toBe(10);
    expect(book.get('openai', 'gpt-4o-mini')).toBe(DEFAULT_PACE);
  });

  it('keeps the hedges in flight within a tenth of the requests in flight, one at least', () => {
    const budget = new HedgeBudget();
    const requests = Array.from({ length: 25 }, () => budget.request());
    const first = budget.tryHedge();
    const second = budget.tryHedge();
    expect(first).not.toBeNull();
    expect(second).not.toBeNull();
    expect(budget.tryHedge(), 'two of 25 requests may be hedged at once').toBeNull();
    second!();
    second!();
    expect(budget.tryHedge(), 'ending a hedge frees its place, once').not.toBeNull();
    expect(budget.tryHedge()).toBeNull();
    for (const end of requests.slice(0, 20)) end();
    // five requests left: the floor of one hedge still holds, and two are in flight already
    expect(budget.tryHedge()).toBeNull();
    const lone = new HedgeBudget();
    lone.request();
    expect(lone.tryHedge(), 'a lone straggler may always be hedged').not.toBeNull();
  });
});
