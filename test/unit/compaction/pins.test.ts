import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { normalizeMessages } from '../../../src/compaction/normalize.js';
import { planCompaction } from '../../../src/compaction/plan/plan.js';
import type { CompactionPlan, PlanRequest, PlanResult } from '../../../src/compaction/plan-types.js';
import type { HistoryMessage } from '../../../src/compaction/types.js';
import { mergePolicy, type PolicyOverride } from '../../../src/config/policy.js';
import { conversation, countTokens, filler, makeSnapshot } from '../../fixtures/builders.js';
import { conversationArb, limitFactorArb, policyArb, requestArb } from './arbitraries.js';
import { checkPlanInvariants } from './invariants.js';

/** Pins (SPEC §5.6a): a pinned message's unit is never summarized nor rewritten, whatever the strategy. */

/** These cases size their tiers against a target of half the window (the default keeps a tenth: every case would summarize). */
const HALF_WINDOW_TARGET: PolicyOverride = { triggerRatio: 0.8, warnRatio: 0.7, targetRatio: 0.5 };

function plan(messages: HistoryMessage[], request: PlanRequest, override: PolicyOverride = {}, contextLimit = 100_000): PlanResult {
  return planCompaction(makeSnapshot(messages, contextLimit), mergePolicy(HALF_WINDOW_TARGET, override), request, countTokens);
}

function expectPlan(result: PlanResult): CompactionPlan {
  if (result.kind !== 'plan') throw new Error(`expected a plan, got noop ${result.reason}`);
  return result;
}

const pin = (messages: HistoryMessage[], ...seqs: number[]): HistoryMessage[] =>
  messages.map((m) => (seqs.includes(m.seq) ? { ...m, pinned: true } : m));

/** system prompt, then `turns` user/assistant pairs of ~`size` tokens each (seqs 2.. alternate user, assistant). */
function chat(turns: number, size = 50): HistoryMessage[] {
  const builder = conversation().system('You are a coding agent.');
  for (let i = 0; i < turns; i += 1) builder.user(`request ${i} ${filler(size)}`).assistant(`answer ${i} ${filler(size)}`);
  return builder.build();
}

describe('planCompaction: pinned messages', () => {
  it.each(['summarize', 'reset', 'auto'] as const)('%s never selects a pinned message, old or new', (strategy) => {
    const messages = pin(chat(20), 3, 10, 11);
    const unpinned = expectPlan(plan(chat(20), { trigger: 'api', strategy }));
    expect(unpinned.compressedSeqs).toEqual(expect.arrayContaining([3, 10, 11]));
    const result = expectPlan(plan(messages, { trigger: 'api', strategy }));
    for (const seq of [3, 10, 11]) expect(result.compressedSeqs).not.toContain(seq);
    expect(result.compressedSeqs).toContain(4);
  });

  it('keeps a pinned tool result with its call, and a pinned call with its results', () => {
    const base = conversation()
      .system('s')
      .user(`old ${filler(200)}`)
      .exchange('a', 'Bash', { command: 'make' }, filler(300, 'build'))
      .exchange('b', 'Read', { file_path: '/src/main.ts' }, filler(300, 'src'))
      .assistant(filler(200))
      .user('now fix the build')
      .build();
    // seqs: 1 system, 2 user, 3-4 exchange a, 5-6 exchange b, 7 assistant, 8 newest user
    const result = expectPlan(plan(pin(base, 4, 5), { trigger: 'api', strategy: 'summarize', keepRecent: 0 }));
    expect(result.compressedSeqs).toEqual([2, 7]);
  });

  it('Tier 1/2 never rewrite a pinned tool output', () => {
    const builder = conversation().system('s');
    for (let i = 0; i < 6; i += 1) builder.exchange(`t${i}`, 'Bash', { command: `step ${i}` }, filler(1000, `out${i}`));
    for (let i = 0; i < 12; i += 1) builder.user(`recent ${i}`);
    const messages = builder.build();
    const total = messages.reduce((s, m) => s + m.tokens, 0);
    const limit = Math.ceil(total / 0.81);
    const unpinned = expectPlan(plan(messages, { trigger: 'auto' }, {}, limit));
    expect(unpinned.rewrites.map((r) => r.seq)).toContain(3);
    const result = expectPlan(plan(pin(messages, 3), { trigger: 'auto' }, {}, limit));
    expect(result.rewrites.map((r) => r.seq)).not.toContain(3);
    expect(result.compressedSeqs).not.toContain(3);
    expect(result.rewrites.length).toBeGreaterThan(0);
  });

  it('keeps the newest user request unpinned, but not a newer meta turn or tool result in its place', () => {
    const messages = conversation()
      .system('s')
      .user(`old ${filler(300)}`)
      .assistant(filler(300))
      .user('port the lexer to Rust')
      .assistant(filler(300))
      .exchange('x', 'Bash', { command: 'cargo build' }, filler(300))
      .user('<task-notification>done</task-notification>')
      .build();
    const result = expectPlan(
      plan(
        messages.map((m) => (m.seq === 8 ? { ...m, meta: true } : m)),
        { trigger: 'api', strategy: 'reset' },
      ),
    );
    expect(result.compressedSeqs).not.toContain(4);
    expect(result.compressedSeqs).toEqual(expect.arrayContaining([2, 3, 5, 6, 7, 8]));
  });

  it('everything pinned is nothing to compact', () => {
    const messages = chat(5);
    const result = plan(pin(messages, ...messages.map((m) => m.seq)), { trigger: 'api', strategy: 'reset' });
    expect(result).toMatchObject({ kind: 'noop', reason: 'nothing_to_compact' });
  });

  it('holds every planner invariant with pins anywhere in generated conversations', () => {
    const pinnedArb = conversationArb.chain((c) =>
      fc.record({
        conversation: fc.constant(c),
        pins: fc.uniqueArray(fc.nat({ max: Math.max(0, c.messages.length - 1) }), { maxLength: Math.min(8, c.messages.length) }),
      }),
    );
    fc.assert(
      fc.property(pinnedArb, policyArb, requestArb, limitFactorArb, ({ conversation: generated, pins }, override, request, factor) => {
        const messages = generated.messages.map((m, i) => (pins.includes(i) && m.kind === 'message' ? { ...m, pinned: true } : m));
        const policy = mergePolicy(override);
        const total = messages.reduce((sum, m) => sum + m.tokens, 0);
        const snapshot = makeSnapshot(messages, Math.max(1000, Math.ceil(total * factor)), generated.previousSummaries);
        checkPlanInvariants(snapshot, policy, request, planCompaction(snapshot, policy, request, countTokens), countTokens);
      }),
      { numRuns: 300 },
    );
  });
});

describe('normalizeMessages: pinned', () => {
  it('takes pinned: true in either format and leaves unpinned messages without the field', () => {
    const anthropic = normalizeMessages(
      [
        { role: 'user', content: 'keep this', pinned: true },
        { role: 'assistant', content: 'ok', pinned: false },
      ],
      'anthropic',
    );
    expect(anthropic).toMatchObject({ ok: true, messages: [{ role: 'user', pinned: true }, { role: 'assistant' }] });
    if (anthropic.ok) expect(anthropic.messages[1]).not.toHaveProperty('pinned');
    const openai = normalizeMessages([{ role: 'tool', tool_call_id: 'c1', content: 'output', pinned: true }], 'openai');
    expect(openai).toMatchObject({ ok: true, messages: [{ role: 'tool', pinned: true }] });
  });

  it.each(['true', 1, null, {}])('refuses pinned: %j, naming the field', (value) => {
    const result = normalizeMessages(
      [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b', pinned: value },
      ],
      'anthropic',
    );
    expect(result).toEqual({ ok: false, issues: [{ field: 'messages.1.pinned', message: 'must be a boolean (true pins the message)' }] });
  });
});
