import { describe, expect, it } from 'vitest';

import { extractLedger, renderLedger } from '../../../../src/compaction/ledger/index.js';
import { planCompaction } from '../../../../src/compaction/plan/plan.js';
import type { HistoryMessage } from '../../../../src/compaction/types.js';
import { mergePolicy } from '../../../../src/config/policy.js';
import { countTokens, filler, makeMessage, makeSnapshot, toolResult, toolUse } from '../../../fixtures/builders.js';

/**
 * Compacting a parent while a sub-agent runs (issue: sub-agent state lost at compaction): the
 * call that started it has no answer yet, so its unit is never summarized, whatever the
 * strategy; the sub-agents that finished are named in the state with how they ended.
 */

function parent(): HistoryMessage[] {
  const messages: HistoryMessage[] = [makeMessage(1, 'user', `Refactor the auth module. ${filler(100)}`)];
  let seq = 2;
  for (let i = 0; i < 20; i += 1) {
    messages.push(
      makeMessage(seq++, 'assistant', [toolUse(`t${i}`, 'Task', { description: `Explore area ${i}`, subagent_type: 'Explore' })]),
    );
    messages.push(makeMessage(seq++, 'user', [toolResult(`t${i}`, `Area ${i} holds ${filler(150)}`)]));
  }
  messages.push(
    makeMessage(seq, 'assistant', [toolUse('running', 'Task', { description: 'Rewrite the token refresh', subagent_type: 'general' })]),
  );
  return messages;
}

describe('a running sub-agent across a compaction of its parent', () => {
  it.each(['summarize', 'reset'] as const)('%s never summarizes the call still waiting for its sub-agent', (strategy) => {
    const messages = parent();
    const result = planCompaction(
      makeSnapshot(messages, 50_000),
      mergePolicy({ strategy }),
      { trigger: 'api', keepRecent: 0 },
      countTokens,
    );
    if (result.kind !== 'plan') throw new Error(`expected a plan, got ${result.reason}`);
    const running = messages.at(-1)!.seq;
    expect(result.compressedSeqs).not.toContain(running);
    expect(result.compressedSeqs.length).toBeGreaterThan(30);
    // what was summarized names each finished sub-agent's task in the state
    const summarized = messages.filter((m) => result.compressedSeqs.includes(m.seq));
    const state = renderLedger(extractLedger(summarized), { maxTokens: 2_000, countTokens });
    expect(state).toContain('[done] Explore area 19 (Explore)');
  });
});
