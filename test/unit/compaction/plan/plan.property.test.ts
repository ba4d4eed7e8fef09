import fc from 'fast-check';
import { describe, it } from 'vitest';

import { planCompaction } from '../../../../src/compaction/plan/plan.js';
import { mergePolicy } from '../../../../src/config/policy.js';
import { countTokens, makeSnapshot } from '../../../fixtures/builders.js';
import { conversationArb, limitFactorArb, policyArb, requestArb } from '../arbitraries.js';
import { checkPlanInvariants } from '../invariants.js';

describe('planCompaction properties', () => {
  it('holds every invariant on generated conversations, policies and requests', () => {
    fc.assert(
      fc.property(conversationArb, policyArb, requestArb, limitFactorArb, (conversation, override, request, factor) => {
        const policy = mergePolicy(override);
        const total = conversation.messages.reduce((sum, m) => sum + m.tokens, 0);
        const snapshot = makeSnapshot(conversation.messages, Math.max(1000, Math.ceil(total * factor)), conversation.previousSummaries);
        const result = planCompaction(snapshot, policy, request, countTokens);
        checkPlanInvariants(snapshot, policy, request, result, countTokens);
      }),
      { numRuns: 400 },
    );
  });

  it('is deterministic: the same snapshot gives the same plan', () => {
    fc.assert(
      fc.property(conversationArb, policyArb, requestArb, (conversation, override, request) => {
        const policy = mergePolicy(override);
        const snapshot = makeSnapshot(conversation.messages, 20_000, conversation.previousSummaries);
        const first = JSON.stringify(planCompaction(snapshot, policy, request, countTokens));
        const second = JSON.stringify(planCompaction(structuredClone(snapshot), policy, request, countTokens));
        return first === second;
      }),
      { numRuns: 100 },
    );
  });
});
