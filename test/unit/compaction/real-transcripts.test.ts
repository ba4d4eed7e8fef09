import { describe, expect, it } from 'vitest';

import { planCompaction } from '../../../src/compaction/plan/plan.js';
import { groupUnits } from '../../../src/compaction/plan/units.js';
import type { PlanRequest, PlanSnapshot } from '../../../src/compaction/plan-types.js';
import { mergePolicy, type PolicyOverride } from '../../../src/config/policy.js';
import { checkPlanInvariants } from './invariants.js';
import { loadRealTranscripts, realCountTokens } from './real-transcripts.js';

/**
 * The planner over every real transcript of the shared set (SOURCES.md there), under
 * several policies: automatic at the threshold, manual, reset, mask-only, a token-sized
 * tail with small chunks, and a request target.
 */

interface Scenario {
  name: string;
  policy: PolicyOverride;
  request: PlanRequest;
  /** context limit as a multiple of the transcript's tokens */
  limitFactor: number;
}

const scenarios: Scenario[] = [
  { name: 'auto at the threshold', policy: {}, request: { trigger: 'auto' }, limitFactor: 1 / 0.85 },
  { name: 'manual summarize-all', policy: {}, request: { trigger: 'api' }, limitFactor: 2 },
  { name: 'reset', policy: {}, request: { trigger: 'api', strategy: 'reset' }, limitFactor: 2 },
  {
    name: 'mask only',
    policy: { strategy: 'mask', tier1: { maxTokens: 800, headTokens: 300, tailTokens: 200 } },
    request: { trigger: 'api' },
    limitFactor: 2,
  },
  {
    name: 'token tail, small chunks, kept users',
    policy: { keepRecentTokens: 3000, chunkTokens: 4000, summaryMaxTokens: 600, keepUserTokens: 2000 },
    request: { trigger: 'tool', focus: 'errors' },
    limitFactor: 1.5,
  },
  { name: 'target ratio', policy: { keepRecent: 4 }, request: { trigger: 'api', target: { ratio: 0.3 } }, limitFactor: 1.2 },
];

const transcripts = loadRealTranscripts();

describe('planCompaction on real transcripts', () => {
  it('finds the whole shared set', () => {
    const bySource = (source: string) => transcripts.filter((t) => t.source === source).length;
    expect(bySource('claude-code')).toBeGreaterThanOrEqual(13);
    expect(bySource('mini-swe-agent')).toBe(8);
    expect(bySource('tau-bench')).toBe(200);
  });

  it('groups Claude Code tool exchanges, parallel calls included, with no orphans', () => {
    const session = transcripts.find((t) => t.name.includes('ae4a77f8') && t.name.endsWith('(full)'));
    expect(session).toBeDefined();
    const units = groupUnits(session?.messages ?? []);
    expect(units.filter((u) => u.kind === 'orphan_result')).toEqual([]);
    expect(units.some((u) => u.kind === 'tool_exchange' && u.messages[0]!.toolUseIds.length > 1)).toBe(true);
  });

  for (const scenario of scenarios) {
    it(`holds every invariant: ${scenario.name}`, () => {
      const policy = mergePolicy(scenario.policy);
      const kinds = new Map<string, number>();
      for (const transcript of transcripts) {
        const tokens = transcript.messages.reduce((sum, m) => sum + m.tokens, 0);
        const snapshot: PlanSnapshot = {
          messages: transcript.messages,
          contextLimit: Math.ceil(tokens * scenario.limitFactor),
          previousSummaries: transcript.previousSummaries,
        };
        const result = planCompaction(snapshot, policy, scenario.request, realCountTokens);
        try {
          checkPlanInvariants(snapshot, policy, scenario.request, result, realCountTokens);
        } catch (error) {
          throw new Error(`${transcript.name}: ${(error as Error).message}`, { cause: error });
        }
        const key = result.kind === 'plan' ? 'plan' : result.reason;
        kinds.set(key, (kinds.get(key) ?? 0) + 1);
      }
      // every long session must actually be compacted, not skipped by a noop
      expect(kinds.get('plan') ?? 0).toBeGreaterThanOrEqual(20);
    });
  }

  it('compacts long Claude Code sessions at the threshold down to the target', () => {
    // a target the plan's projection can reach: it counts each chunk's summary at its cap
    // before the consolidation, so the default tenth of the window is below what it projects
    const policy = mergePolicy({ targetRatio: 0.3 });
    for (const transcript of transcripts.filter((t) => t.source === 'claude-code' && t.messages.length > 200)) {
      const tokens = transcript.messages.reduce((sum, m) => sum + m.tokens, 0);
      const snapshot: PlanSnapshot = {
        messages: transcript.messages,
        contextLimit: Math.ceil(tokens / 0.85),
        previousSummaries: transcript.previousSummaries,
      };
      const result = planCompaction(snapshot, policy, { trigger: 'auto' }, realCountTokens);
      expect(result.kind, transcript.name).toBe('plan');
      if (result.kind !== 'plan') continue;
      expect(result.tokensAfter, transcript.name).toBeLessThanOrEqual(result.targetTokens ?? 0);
      expect(result.tokensAfter, transcript.name).toBeLessThan(result.tokensBefore);
    }
  });
});
