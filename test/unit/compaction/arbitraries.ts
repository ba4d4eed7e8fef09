import fc from 'fast-check';

import type { LiveBatch, PlanRequest } from '../../../src/compaction/plan-types.js';
import type { Block, HistoryMessage, Role } from '../../../src/compaction/types.js';
import type { PolicyOverride } from '../../../src/config/policy.js';
import { filler, makeBatch, makeMessage, text, toolResult, toolUse } from '../../fixtures/builders.js';

/**
 * fast-check generators of conversations with every shape the unit grouping must survive:
 * parallel calls, results spread over several messages (role user or tool), messages
 * interleaved inside an exchange, orphaned results, a pending trailing exchange, a leading
 * system prompt and a clip-archive with its live batches. Seqs have gaps, as after earlier
 * compactions.
 */

type Step =
  | { t: 'user'; size: number; question: boolean; keyword: boolean }
  | { t: 'assistant'; size: number }
  | { t: 'system'; size: number }
  | { t: 'exchange'; calls: number; split: boolean; role: Role; sizes: number[]; error: boolean; interleave: boolean }
  | { t: 'orphan'; size: number };

const size = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 1, max: 80 }) },
  { weight: 3, arbitrary: fc.integer({ min: 150, max: 1500 }) },
  { weight: 1, arbitrary: fc.integer({ min: 2500, max: 6000 }) },
);

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant('user' as const), size, question: fc.boolean(), keyword: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('assistant' as const), size }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('system' as const), size: fc.integer({ min: 1, max: 50 }) }) },
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('exchange' as const),
      calls: fc.integer({ min: 1, max: 3 }),
      split: fc.boolean(),
      role: fc.constantFrom<Role>('user', 'tool'),
      sizes: fc.array(size, { minLength: 3, maxLength: 3 }),
      error: fc.boolean(),
      interleave: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('orphan' as const), size }) },
);

export interface GeneratedConversation {
  messages: HistoryMessage[];
  previousSummaries: LiveBatch[];
}

class Writer {
  readonly messages: HistoryMessage[] = [];
  private seq: number;
  private ids = 0;
  constructor(
    start: number,
    private readonly gaps: number[],
  ) {
    this.seq = start;
  }
  push(role: Role, content: string | Block[], kind: 'message' | 'clip_archive' = 'message'): void {
    this.messages.push(makeMessage(this.seq, role, content, { kind }));
    this.seq += 1 + (this.gaps[this.messages.length % this.gaps.length] ?? 0);
  }
  id(): string {
    this.ids += 1;
    return `call_${this.ids}`;
  }
}

function writeExchange(w: Writer, s: Extract<Step, { t: 'exchange' }>, answered: boolean | 'partial'): void {
  const ids = Array.from({ length: s.calls }, () => w.id());
  w.push('assistant', [text('working on it'), ...ids.map((id, i) => toolUse(id, i % 2 ? 'Read' : 'Bash', { command: `run ${id}` }))]);
  if (answered === false) return;
  const answeredIds = answered === 'partial' ? ids.slice(0, Math.max(0, ids.length - 1)) : ids;
  if (s.interleave && answeredIds.length > 0) w.push('user', 'by the way, keep going');
  const results = answeredIds.map((id, i) => toolResult(id, filler(s.sizes[i] ?? 10, `out ${id}`), s.error && i === 0));
  if (s.split) for (const block of results) w.push(s.role, [block]);
  else if (results.length > 0) w.push(s.role, results);
}

function writeStep(w: Writer, s: Step): void {
  switch (s.t) {
    case 'user': {
      const extra = `${s.question ? ' why did it break?' : ''}${s.keyword ? ' this must never fail' : ''}`;
      return w.push('user', `${filler(s.size, 'req')}${extra}`);
    }
    case 'assistant':
      return w.push('assistant', filler(s.size, 'note'));
    case 'system':
      return w.push('system', filler(s.size, 'reminder'));
    case 'exchange':
      return writeExchange(w, s, true);
    case 'orphan':
      return w.push('user', [toolResult(`gone_${w.messages.length}`, filler(s.size, 'stale'))]);
  }
}

export const conversationArb: fc.Arbitrary<GeneratedConversation> = fc
  .record({
    start: fc.integer({ min: 1, max: 500 }),
    gaps: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 5 }),
    systemPrompt: fc.boolean(),
    clip: fc.boolean(),
    steps: fc.array(step, { minLength: 0, maxLength: 60, size: 'large' }),
    pending: fc.constantFrom<false | true | 'partial'>(false, true, 'partial'),
    pendingExchange: fc.record({
      t: fc.constant('exchange' as const),
      calls: fc.integer({ min: 1, max: 3 }),
      split: fc.boolean(),
      role: fc.constantFrom<Role>('user', 'tool'),
      sizes: fc.array(size, { minLength: 3, maxLength: 3 }),
      error: fc.constant(false),
      interleave: fc.constant(false),
    }),
  })
  .map((g) => {
    const w = new Writer(g.start, g.gaps);
    if (g.systemPrompt) w.push('system', 'You are a careful coding agent.');
    const previousSummaries: LiveBatch[] = [];
    if (g.clip) {
      w.push('system', '<compactd-archive>earlier work</compactd-archive>', 'clip_archive');
      previousSummaries.push(makeBatch('batch-1', [1, 2, 3], '## TASK STATE\n- earlier work'));
    }
    for (const s of g.steps) writeStep(w, s);
    if (g.pending !== false) writeExchange(w, g.pendingExchange, g.pending === 'partial' ? 'partial' : false);
    return { messages: w.messages, previousSummaries };
  });

export const policyArb: fc.Arbitrary<PolicyOverride> = fc
  .record({
    keepRecent: fc.integer({ min: 0, max: 15 }),
    keepRecentTokens: fc.option(fc.integer({ min: 50, max: 4000 }), { nil: undefined }),
    keepUserTokens: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2000 })),
    chunkTokens: fc.integer({ min: 500, max: 5000 }),
    summaryMaxTokens: fc.integer({ min: 64, max: 450 }),
    minProgressRatio: fc.double({ min: 0, max: 0.3, noNaN: true }),
    tier1Max: fc.integer({ min: 300, max: 3000 }),
    tier2Min: fc.integer({ min: 10, max: 300 }),
    recencyWeight: fc.double({ min: 0, max: 6, noNaN: true }),
    strategy: fc.constantFrom('auto', 'auto', 'auto', 'summarize', 'mask', 'reset' as const),
  })
  .map((p) => {
    const policy: PolicyOverride = {
      keepRecent: p.keepRecent,
      keepUserTokens: p.keepUserTokens,
      chunkTokens: p.chunkTokens,
      summaryMaxTokens: p.summaryMaxTokens,
      minProgressRatio: p.minProgressRatio,
      tier1: { maxTokens: p.tier1Max, headTokens: Math.floor(p.tier1Max * 0.4), tailTokens: Math.floor(p.tier1Max * 0.2) },
      tier2: { minTokens: p.tier2Min },
      scoring: { recency: { weight: p.recencyWeight } },
      strategy: p.strategy,
      toolMinTokens: 500,
    };
    if (p.keepRecentTokens !== undefined) policy.keepRecentTokens = p.keepRecentTokens;
    return policy;
  });

export const requestArb: fc.Arbitrary<PlanRequest> = fc
  .record({
    trigger: fc.constantFrom('api', 'auto', 'tool' as const),
    strategy: fc.option(fc.constantFrom('auto', 'summarize', 'mask', 'reset' as const), { nil: undefined }),
    keepRecent: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
    target: fc.option(
      fc.oneof(
        fc.record({ ratio: fc.double({ min: 0.05, max: 0.9, noNaN: true }) }),
        fc.record({ tokens: fc.integer({ min: 0, max: 40_000 }) }),
      ),
      { nil: undefined },
    ),
  })
  .map((r) => {
    const request: PlanRequest = { trigger: r.trigger };
    if (r.strategy !== undefined) request.strategy = r.strategy;
    if (r.keepRecent !== undefined) request.keepRecent = r.keepRecent;
    if (r.target !== undefined) request.target = r.target;
    return request;
  });

/** Context limit as a multiple of the history's tokens, so every trigger/target situation occurs. */
export const limitFactorArb = fc.double({ min: 0.7, max: 3, noNaN: true });
