import type { Policy } from '../config/policy.js';

/**
 * Output budgets (SPEC §5.4): a chunk's answer is sized to its source, a consolidation's to
 * the summaries it absorbs, both clamped to the policy's bounds. The budget is the request's
 * `max_tokens`; an answer stopped there is retried once with `retryBudget`.
 */

type BudgetPolicy = Pick<Policy, 'summaryRatio' | 'summaryMinTokens' | 'summaryMaxTokens' | 'consolidationRatio' | 'maxIdentifiers'>;

/** What one named identifier costs in the answer, about (a path or an error line). */
export const TOKENS_PER_IDENTIFIER = 10;

function clampBudget(policy: BudgetPolicy, tokens: number): number {
  const floor = Math.min(policy.summaryMinTokens, policy.summaryMaxTokens);
  return Math.min(policy.summaryMaxTokens, Math.max(floor, Math.round(tokens)));
}

export function chunkOutputBudget(policy: BudgetPolicy, sourceTokens: number): number {
  return clampBudget(policy, sourceTokens * policy.summaryRatio);
}

export function consolidationOutputBudget(policy: BudgetPolicy, absorbedTokens: number): number {
  return clampBudget(policy, absorbedTokens * policy.consolidationRatio);
}

/** The larger budget of the one retry after an answer stopped at its budget. */
export function retryBudget(budget: number): number {
  return budget * 2;
}

/** How many identifiers a request names: at most a third of its budget goes to them. */
export function namedIdentifierCount(policy: BudgetPolicy, budget: number): number {
  return Math.min(policy.maxIdentifiers, Math.floor(budget / 3 / TOKENS_PER_IDENTIFIER));
}

/**
 * Characters a token takes, at least, in the repair list's estimate: about 4 in prose and
 * paths, 2 in dense hex or base64, so the bound below holds within about 2×.
 */
const REPAIR_CHARS_PER_TOKEN = 4;

/**
 * The most characters of missing identifiers one repair request names (`identifierRepair:
 * call`): about the answer's own budget, so the request and its answer stay bounded however
 * many identifiers the source holds; the rest stay one exact recall away in the archive.
 */
export function repairListChars(budget: number): number {
  return budget * REPAIR_CHARS_PER_TOKEN;
}
