import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { chooseStrategy, estimateNativeMs, planNative, type StrategyInputs } from '../../../../src/compaction/plan/index.js';
import type { HistoryMessage } from '../../../../src/compaction/types.js';
import { mergePolicy } from '../../../../src/config/policy.js';

const base: StrategyInputs = {
  requested: 'auto',
  native: { provider: 'anthropic' },
  spanTokens: 40_000,
  contextLimit: 200_000,
  agentWaiting: false,
  latencyBudgetMs: 60_000,
};

describe("auto's rule (SPEC §5.10)", () => {
  it('goes native in the background when one call fits the budget', () => {
    const decision = chooseStrategy(base);
    expect(decision.strategy).toBe('native');
    expect(decision.estimatedNativeMs).toBe(estimateNativeMs(40_000));
    expect(decision.estimatedNativeMs).toBeLessThanOrEqual(60_000);
  });

  it('runs parallel chunks when the agent waits, when the span is over one window, or over the budget', () => {
    expect(chooseStrategy({ ...base, agentWaiting: true })).toMatchObject({ strategy: 'auto', reason: expect.stringMatching(/waiting/) });
    expect(chooseStrategy({ ...base, spanTokens: 250_000 })).toMatchObject({ strategy: 'auto', reason: expect.stringMatching(/window/) });
    expect(chooseStrategy({ ...base, spanTokens: 150_000 })).toMatchObject({ strategy: 'auto', reason: expect.stringMatching(/budget/) });
  });

  it('falls back to compactd and says why when the provider compaction is unusable', () => {
    const unavailable = { unavailable: 'provider openai is not configured' };
    expect(chooseStrategy({ ...base, native: unavailable })).toMatchObject({ strategy: 'auto', reason: expect.stringMatching(/openai/) });
    expect(chooseStrategy({ ...base, requested: 'native', native: unavailable }).strategy).toBe('summarize');
  });

  it('keeps any other strategy asked for, and native asked for even when slow', () => {
    for (const requested of ['summarize', 'mask', 'reset'] as const)
      expect(chooseStrategy({ ...base, requested }).strategy).toBe(requested);
    expect(chooseStrategy({ ...base, requested: 'native', spanTokens: 180_000, agentWaiting: true }).strategy).toBe('native');
  });

  it('never picks native for a waiting agent, a span over the window or an estimate over the budget', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 400_000 }),
        fc.integer({ min: 1_000, max: 400_000 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 300_000 }),
        (spanTokens, contextLimit, agentWaiting, latencyBudgetMs) => {
          const decision = chooseStrategy({ ...base, spanTokens, contextLimit, agentWaiting, latencyBudgetMs });
          const native = !agentWaiting && spanTokens <= contextLimit && estimateNativeMs(spanTokens) <= latencyBudgetMs;
          expect(decision.strategy).toBe(native ? 'native' : 'auto');
        },
      ),
    );
  });
});

const message = (seq: number, extra: Partial<HistoryMessage> = {}): HistoryMessage => ({
  seq,
  role: seq % 2 === 1 ? 'user' : 'assistant',
  kind: 'message',
  content: [],
  tokens: 100,
  toolUseIds: [],
  toolResultIds: [],
  ...extra,
});

describe('the span of a native compaction', () => {
  it('is every active message but the clip-archive, pinned units and a trailing tool call waiting for its result', () => {
    const messages = [
      message(1, { kind: 'clip_archive', role: 'system' }),
      message(2),
      message(3, { pinned: true }),
      message(4),
      message(5, { role: 'assistant', toolUseIds: ['t1'] }),
      message(6, { role: 'user', toolResultIds: ['t1'] }),
      message(7, { role: 'assistant', toolUseIds: ['t2'] }),
    ];
    const plan = planNative({ messages, contextLimit: 10_000, previousSummaries: [] }, mergePolicy({}), { trigger: 'api' }, 'anthropic');
    expect(plan.kind).toBe('plan');
    if (plan.kind !== 'plan') return;
    expect(plan.compressedSeqs).toEqual([2, 4, 5, 6]);
    expect(plan.chunks).toHaveLength(1);
    expect(plan.supersededClipArchiveSeq).toBe(1);
    expect(plan.strategy).toBe('native');
  });

  it('keeps the leading system prompt, and for OpenAI the user messages its compaction keeps beside its item', () => {
    const messages = [
      message(1, { role: 'system' }),
      message(2, { role: 'user' }),
      message(3, { role: 'assistant' }),
      message(4, { role: 'assistant', toolUseIds: ['t1'] }),
      message(5, { role: 'user', toolResultIds: ['t1'] }),
      message(6, { role: 'user' }),
    ];
    const snapshot = { messages, contextLimit: 10_000, previousSummaries: [] };
    const anthropic = planNative(snapshot, mergePolicy({}), { trigger: 'api' }, 'anthropic');
    const openai = planNative(snapshot, mergePolicy({}), { trigger: 'api' }, 'openai');
    if (anthropic.kind !== 'plan' || openai.kind !== 'plan') throw new Error('expected plans');
    expect(anthropic.compressedSeqs).toEqual([2, 3, 4, 5, 6]);
    expect(openai.compressedSeqs).toEqual([3, 4, 5]);
    expect(openai.nativeRequestSeqs).toEqual([2, 3, 4, 5, 6]);
  });

  it('is a noop when nothing can be compacted', () => {
    const plan = planNative(
      { messages: [message(1, { pinned: true })], contextLimit: 10_000, previousSummaries: [] },
      mergePolicy({}),
      {
        trigger: 'api',
      },
      'anthropic',
    );
    expect(plan).toMatchObject({ kind: 'noop', reason: 'nothing_to_compact' });
  });
});
