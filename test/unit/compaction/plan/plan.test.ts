import { describe, expect, it } from 'vitest';

import { planCompaction } from '../../../../src/compaction/plan/plan.js';
import type { CompactionPlan, PlanRequest, PlanResult } from '../../../../src/compaction/plan-types.js';
import type { HistoryMessage } from '../../../../src/compaction/types.js';
import { mergePolicy, type PolicyOverride } from '../../../../src/config/policy.js';
import { conversation, countTokens, filler, makeBatch, makeSnapshot } from '../../../fixtures/builders.js';

/** These cases size their tiers against a target of half the window (the default keeps a tenth: every case would summarize). */
const HALF_WINDOW_TARGET: PolicyOverride = { triggerRatio: 0.8, warnRatio: 0.7, targetRatio: 0.5 };

function plan(messages: HistoryMessage[], request: PlanRequest, override: PolicyOverride = {}, contextLimit = 100_000): PlanResult {
  return planCompaction(makeSnapshot(messages, contextLimit), mergePolicy(HALF_WINDOW_TARGET, override), request, countTokens);
}

function expectPlan(result: PlanResult): CompactionPlan {
  if (result.kind !== 'plan') throw new Error(`expected a plan, got noop ${result.reason}`);
  return result;
}

function kept(result: CompactionPlan, messages: HistoryMessage[]): number[] {
  const gone = new Set([...result.compressedSeqs, ...(result.supersededClipArchiveSeq === null ? [] : [result.supersededClipArchiveSeq])]);
  return messages.map((m) => m.seq).filter((seq) => !gone.has(seq));
}

/** system prompt, then `turns` user/assistant pairs of ~`size` tokens each. */
function chat(turns: number, size = 50): HistoryMessage[] {
  const builder = conversation().system('You are a coding agent.');
  for (let i = 0; i < turns; i += 1) builder.user(`request ${i} ${filler(size)}`).assistant(`answer ${i} ${filler(size)}`);
  return builder.build();
}

describe('planCompaction: noops', () => {
  it.each([
    ['empty history', [], { trigger: 'api' }, {}, 'empty'],
    ['auto already within target', chat(3), { trigger: 'auto' }, {}, 'below_target'],
    ['tool below its minimum', chat(3), { trigger: 'tool' }, { toolMinTokens: 10_000 }, 'below_tool_minimum'],
    ['everything protected', chat(3), { trigger: 'api' }, {}, 'nothing_to_compact'],
    ['explicit target already met', chat(20), { trigger: 'api', target: { tokens: 50_000 } }, {}, 'below_target'],
  ] as const)('%s → %s', (_name, messages, request, override, reason) => {
    const result = plan([...messages], request, override);
    expect(result).toMatchObject({ kind: 'noop', reason });
    if (result.kind === 'noop') expect(result.message.length).toBeGreaterThan(10);
  });

  it('reports insufficient progress when the tail dominates', () => {
    const messages = conversation().system('s').user('old').assistant('old').user(filler(3000)).assistant(filler(3000)).build();
    const result = plan(messages, { trigger: 'api', keepRecent: 2 }, { minProgressRatio: 0.5 });
    expect(result).toMatchObject({ kind: 'noop', reason: 'insufficient_progress' });
  });

  it('an auto compaction that would end above the trigger is insufficient progress', () => {
    const messages = chat(20, 200);
    const total = messages.reduce((s, m) => s + m.tokens, 0);
    // the trigger sits at 0.8 / 0.95 ≈ 84% of the history; compressing ~10% of it cannot get below
    const result = plan(messages, { trigger: 'auto', keepRecent: 36 }, { minProgressRatio: 0.01 }, Math.floor(total / 0.95));
    expect(result).toMatchObject({ kind: 'noop', reason: 'insufficient_progress' });
  });
});

describe('planCompaction: protected messages', () => {
  it('keeps the system prompt and the last keepRecent messages, summarizing the rest', () => {
    const messages = chat(20);
    const result = expectPlan(plan(messages, { trigger: 'api' }));
    expect(kept(result, messages)).toEqual([1, ...messages.slice(-12).map((m) => m.seq)]);
    expect(result.watermarkSeq).toBe(41);
    expect(result.targetTokens).toBeNull();
  });

  it('extends the tail back to the start of a tool exchange', () => {
    const messages = conversation()
      .system('s')
      .user(`first ${filler(200)}`)
      .assistant(filler(200))
      .calls([
        { id: 'a', name: 'Bash' },
        { id: 'b', name: 'Read' },
      ])
      .results([{ id: 'a', output: 'A' }])
      .results([{ id: 'b', output: 'B' }])
      .user('thanks')
      .build();
    const result = expectPlan(plan(messages, { trigger: 'api', keepRecent: 2 }));
    expect(kept(result, messages)).toEqual([1, 4, 5, 6, 7]);
  });

  it('never starts the kept tail with an orphaned tool result', () => {
    const messages = conversation()
      .system('s')
      .user(filler(300))
      .results([{ id: 'gone', output: filler(50) }])
      .assistant('next step')
      .user('ok?')
      .build();
    const result = expectPlan(plan(messages, { trigger: 'api', keepRecent: 3 }));
    expect(result.compressedSeqs).toContain(3);
    expect(kept(result, messages)).toEqual([1, 4, 5]);
  });

  it('sizes the tail in tokens with keepRecentTokens', () => {
    const messages = chat(10, 100);
    const result = expectPlan(plan(messages, { trigger: 'api' }, { keepRecentTokens: 250 }));
    // each message is ~110 tokens: three messages reach 250
    expect(kept(result, messages)).toEqual([1, 19, 20, 21]);
  });

  it('a default tail holds at most half the target: twelve big messages never keep a compaction over it', () => {
    const messages = chat(20, 500);
    const result = expectPlan(plan(messages, { trigger: 'api', target: { tokens: 4000 } }));
    // each message is ~510 tokens: three of them fit 2,000, the twelve of keepRecent do not
    expect(kept(result, messages)).toEqual([1, ...messages.slice(-3).map((m) => m.seq)]);
    const twelve = expectPlan(plan(messages, { trigger: 'api', keepRecent: 12, target: { tokens: 4000 } }));
    expect(result.tokensAfter).toBeLessThan(twelve.tokensAfter - 4000);
  });

  it('the newest message stays even when it alone is over the cap', () => {
    const messages = conversation()
      .system('s')
      .user(`first ${filler(500)}`)
      .assistant(filler(500))
      .user(filler(3000))
      .build();
    const result = expectPlan(plan(messages, { trigger: 'api', target: { tokens: 1000 } }));
    expect(kept(result, messages)).toEqual([1, 4]);
  });

  it('an explicit keepRecent or keepRecentTokens is kept whatever the target', () => {
    const messages = chat(20, 500);
    const counted = expectPlan(plan(messages, { trigger: 'api', keepRecent: 12, target: { tokens: 4000 } }));
    expect(kept(counted, messages)).toEqual([1, ...messages.slice(-12).map((m) => m.seq)]);
    const sized = expectPlan(plan(messages, { trigger: 'api', target: { tokens: 4000 } }, { keepRecentTokens: 3000 }));
    expect(kept(sized, messages)).toEqual([1, ...messages.slice(-6).map((m) => m.seq)]);
  });

  it('request keepRecent overrides the policy, including a token-sized tail', () => {
    const messages = chat(10, 100);
    const result = expectPlan(plan(messages, { trigger: 'api', keepRecent: 1 }, { keepRecentTokens: 5000 }));
    expect(kept(result, messages)).toEqual([1, 20, 21]);
  });

  it('always keeps the newest user message and a pending exchange, even with keepRecent 0', () => {
    const messages = conversation()
      .system('s')
      .user(`old ${filler(300)}`)
      .assistant(filler(300))
      .user('please run the tests')
      .assistant(filler(300))
      .calls([{ id: 'p', name: 'Bash', input: { command: 'npm test' } }])
      .build();
    const result = expectPlan(plan(messages, { trigger: 'api', keepRecent: 0 }));
    expect(kept(result, messages)).toEqual([1, 4, 6]);
  });

  it('reset keeps only the system prompt, the newest user message and pending calls', () => {
    const messages = chat(20);
    const result = expectPlan(plan(messages, { trigger: 'api', strategy: 'reset' }));
    expect(kept(result, messages)).toEqual([1, 40]);
    expect(result.strategy).toBe('reset');
  });

  it('keeps older user messages verbatim within keepUserTokens', () => {
    const messages = chat(20);
    const perUser = messages[1]?.tokens ?? 0;
    const result = expectPlan(plan(messages, { trigger: 'api', keepRecent: 2 }, { keepUserTokens: perUser * 2 }));
    // newest user (40) is in the tail; the budget covers the two user messages before it
    expect(kept(result, messages)).toEqual([1, 36, 38, 40, 41]);
  });
});

describe('planCompaction: selection and strategies', () => {
  it('auto compresses lowest-score units first and keeps important older ones', () => {
    const builder = conversation().system('s');
    for (let i = 0; i < 14; i += 1) builder.assistant(`progress note ${i} ${filler(150)}`);
    builder.user(`Requirement: you must never touch /etc/passwd. Why did the build fail? ${filler(150)}`);
    for (let i = 0; i < 28; i += 1) builder.assistant(`more ${i} ${filler(150)}`);
    const messages = builder.build();
    const total = messages.reduce((s, m) => s + m.tokens, 0);
    const result = expectPlan(plan(messages, { trigger: 'auto' }, {}, Math.ceil(total / 0.85)));
    expect(result.compressedSeqs).not.toContain(16);
    expect(result.compressedSeqs).toContain(2);
    expect(result.tokensAfter).toBeLessThanOrEqual(result.targetTokens ?? 0);
    expect(result.compressedSeqs.length).toBeGreaterThan(0);
  });

  it('summarize with a target stops once the projection reaches it', () => {
    const messages = chat(30, 100);
    const total = messages.reduce((s, m) => s + m.tokens, 0);
    const target = Math.floor(total * 0.7);
    const result = expectPlan(plan(messages, { trigger: 'api', strategy: 'summarize', target: { tokens: target } }));
    expect(result.tokensAfter).toBeLessThanOrEqual(target);
    const all = expectPlan(plan(messages, { trigger: 'api', strategy: 'summarize' }));
    expect(result.compressedSeqs.length).toBeLessThan(all.compressedSeqs.length);
    expect(result.rewrites).toEqual([]);
  });

  it('Tier 1 truncates an oversized tool output and makes no LLM call when that reaches the target', () => {
    const log = filler(8000, 'log');
    const messages = conversation().system('s').user('read the log').exchange('t', 'Read', { file_path: '/var/log/app.log' }, log).build();
    for (let i = 0; i < 14; i += 1) messages.push({ ...messages[1]!, seq: 4 + i });
    const total = messages.reduce((s, m) => s + m.tokens, 0);
    const result = expectPlan(plan(messages, { trigger: 'auto' }, {}, Math.ceil(total / 0.85)));
    expect(result.chunks).toEqual([]);
    expect(result.rewrites.map((r) => [r.seq, r.reason])).toEqual([[4, 'truncated']]);
    const block = result.rewrites[0]?.content[0];
    expect(block).toMatchObject({ type: 'tool_result', tool_use_id: 't' });
    const body = block?.type === 'tool_result' && typeof block.content === 'string' ? block.content : '';
    expect(body).toContain('archived with message seq 4');
    expect(body.startsWith('log 0 ')).toBe(true);
    expect(body.endsWith(log.split('\n').at(-1) ?? '-')).toBe(true);
    expect(countTokens(body)).toBeLessThanOrEqual(1600);
  });

  it('Tier 2 masks the oldest tool outputs first and keeps tool pairing', () => {
    const builder = conversation().system('s');
    for (let i = 0; i < 6; i += 1) builder.exchange(`t${i}`, 'Bash', { command: `step ${i}` }, filler(1000, `out${i}`));
    for (let i = 0; i < 12; i += 1) builder.user(`recent ${i}`);
    const messages = builder.build();
    const total = messages.reduce((s, m) => s + m.tokens, 0);
    const result = expectPlan(plan(messages, { trigger: 'auto' }, {}, Math.ceil(total / 0.81)));
    expect(result.chunks).toEqual([]);
    const masked = result.rewrites.filter((r) => r.reason === 'masked').map((r) => r.seq);
    expect(masked.length).toBeGreaterThan(0);
    expect(masked).toEqual([3, 5, 7, 9, 11, 13].slice(0, masked.length));
    const first = result.rewrites[0]?.content[0];
    expect(first).toMatchObject({ type: 'tool_result', tool_use_id: 't0' });
    expect(JSON.stringify(first)).toContain('masked to save context');
  });

  it('mask never summarizes, even without a target', () => {
    const builder = conversation().system('s');
    for (let i = 0; i < 6; i += 1) builder.exchange(`t${i}`, 'Bash', { command: `step ${i}` }, filler(500));
    for (let i = 0; i < 12; i += 1) builder.user(`recent ${i}`);
    const result = expectPlan(plan(builder.build(), { trigger: 'api', strategy: 'mask' }));
    expect(result.chunks).toEqual([]);
    expect(result.stats.masked).toBe(6);
    expect(result.supersededClipArchiveSeq).toBeNull();
  });

  it('auto goes on to summarize when the tiers cannot reach the target, restoring masks it no longer needs', () => {
    const builder = conversation().system('s');
    for (let i = 0; i < 30; i += 1) builder.user(`chat ${i} ${filler(300)}`);
    for (let i = 0; i < 2; i += 1) builder.exchange(`t${i}`, 'Bash', { command: `x${i}` }, filler(400));
    for (let i = 0; i < 12; i += 1) builder.user(`recent ${i}`);
    const messages = builder.build();
    const total = messages.reduce((s, m) => s + m.tokens, 0);
    const result = expectPlan(plan(messages, { trigger: 'auto' }, {}, Math.ceil(total / 0.81)));
    expect(result.chunks.length).toBeGreaterThan(0);
    expect(result.tokensAfter).toBeLessThanOrEqual(result.targetTokens ?? 0);
    const compressed = new Set(result.compressedSeqs);
    for (const rewrite of result.rewrites) expect(compressed.has(rewrite.seq)).toBe(false);
  });
});

describe('planCompaction: chunks and the clip-archive', () => {
  it('fills chunks up to chunkTokens, chronological inside, oversized units alone and flagged', () => {
    const builder = conversation().system('s');
    for (let i = 0; i < 20; i += 1) builder.user(`u${i} ${filler(400)}`);
    builder.exchange('big', 'Read', { file_path: '/big.txt' }, filler(5000));
    for (let i = 0; i < 12; i += 1) builder.user(`recent ${i}`);
    const result = expectPlan(
      plan(builder.build(), { trigger: 'api', strategy: 'summarize' }, { chunkTokens: 2000, summaryMaxTokens: 300 }),
    );
    for (const chunk of result.chunks) {
      expect(chunk.sourceTokens).toBeLessThanOrEqual(2000);
      expect(chunk.seqs).toEqual([...chunk.seqs].sort((a, b) => a - b));
    }
    const big = result.chunks.find((chunk) => chunk.seqs.includes(22));
    expect(big).toMatchObject({ seqs: [22, 23], truncatedForPrompt: true, sourceTokens: 2000 });
    expect(result.chunks.map((c) => c.index)).toEqual(result.chunks.map((_, i) => i));
    expect(result.compressedSeqs).toEqual(result.chunks.flatMap((c) => c.seqs).sort((a, b) => a - b));
  });

  it('supersedes the previous clip-archive and carries its batches', () => {
    const builder = conversation(100).system('s').clipArchive('<compactd-archive>…');
    for (let i = 0; i < 20; i += 1) builder.user(`u${i} ${filler(100)}`);
    const messages = builder.build();
    const snapshot = makeSnapshot(messages, 100_000, [makeBatch('b1', [1, 2, 3], 'earlier summary')]);
    const result = expectPlan(planCompaction(snapshot, mergePolicy(), { trigger: 'api', focus: 'auth' }, countTokens));
    expect(result.supersededClipArchiveSeq).toBe(101);
    expect(result.previousBatchIds).toEqual(['b1']);
    expect(result.focus).toBe('auth');
    expect(result.compressedSeqs).not.toContain(101);
    expect(result.compressedSeqs).not.toContain(100);
  });

  it('is plain JSON (stored as jsonb, executed by another process)', () => {
    const builder = conversation().system('s');
    for (let i = 0; i < 6; i += 1) builder.exchange(`t${i}`, 'Bash', { command: `step ${i}` }, filler(4000));
    for (let i = 0; i < 12; i += 1) builder.user(`recent ${i}`);
    const result = expectPlan(plan(builder.build(), { trigger: 'api', strategy: 'mask' }));
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  });
});
