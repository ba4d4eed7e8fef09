import type { Policy } from '../../config/policy.js';

/**
 * Output budgets (SPEC §5.4): a chunk's answer is sized to its source, a consolidation's to
 * the summaries it absorbs, both clamped to the policy's bounds. The budget is the length the
 * directive asks for (the target); the request's `max_tokens` is `outputCap`, a runaway cap
 * with headroom above it, so an answer that overruns its target by a third is not cut.
 */

type BudgetPolicy = Pick<Policy, 'summaryRatio' | 'summaryMinTokens' | 'summaryMaxTokens' | 'consolidationRatio' | 'maxIdentifiers'>;
type ClipBudgetPolicy = BudgetPolicy & Pick<Policy, 'clipArchiveMaxTokens' | 'ledgerMaxTokens'>;

/** What one named identifier costs in the answer, about (a path or an error line). */
export const TOKENS_PER_IDENTIFIER = 10;

const budgetFloor = (policy: BudgetPolicy): number => Math.min(policy.summaryMinTokens, policy.summaryMaxTokens);

function clampBudget(policy: BudgetPolicy, tokens: number): number {
  return Math.min(policy.summaryMaxTokens, Math.max(budgetFloor(policy), Math.round(tokens)));
}

export function chunkOutputBudget(policy: BudgetPolicy, sourceTokens: number): number {
  return clampBudget(policy, sourceTokens * policy.summaryRatio);
}

export function consolidationOutputBudget(policy: BudgetPolicy, absorbedTokens: number): number {
  return clampBudget(policy, absorbedTokens * policy.consolidationRatio);
}

/**
 * SPEC §5.7: what the clip-archive leaves the narrative summaries — its budget less the
 * ledger's share, the framing and the summaries that stay live — never below zero.
 */
export function narrativeBudget(policy: ClipBudgetPolicy, framingTokens: number, keptSummaryTokens: number): number {
  return Math.max(0, policy.clipArchiveMaxTokens - policy.ledgerMaxTokens - framingTokens - keptSummaryTokens);
}

/**
 * The chunks of one compaction share the narrative budget in proportion to their source, each
 * within its own clamp (never above what its excerpt is worth, never below the floor that
 * leaves room for the seven sections). When the floor makes the sum overrun the budget (many
 * chunks), the consolidation that follows the commit brings the clip-archive back within it,
 * off the agent's path.
 */
export function chunkOutputBudgets(policy: ClipBudgetPolicy, sourceTokens: readonly number[], narrative: number): number[] {
  const total = sourceTokens.reduce((sum, tokens) => sum + tokens, 0);
  return sourceTokens.map((tokens) => {
    const share = total > 0 ? Math.floor((narrative * tokens) / total) : narrative;
    return Math.min(chunkOutputBudget(policy, tokens), Math.max(budgetFloor(policy), share));
  });
}

/** A consolidation's budget: what it absorbs is worth, within the narrative budget left to it. */
export function consolidationBudgetWithin(policy: ClipBudgetPolicy, absorbedTokens: number, narrative: number): number {
  return Math.min(consolidationOutputBudget(policy, absorbedTokens), Math.max(budgetFloor(policy), narrative));
}

/**
 * Headroom of the runaway cap: models overrun a requested length by a third and more, and an
 * answer cut there is worth less than the few hundred tokens it would have taken to finish.
 */
export const CAP_RATIO = 1.5;
export const CAP_EXTRA_TOKENS = 128;

/**
 * The `max_tokens` sent for a `target` length: 1.5× the target plus a constant, within the
 * model's output limit — and never below the target itself (a model whose limit is below
 * its target is asked for the target, as it always was).
 */
export function outputCap(target: number, modelOutputLimit: number): number {
  const headroom = Math.ceil(target * CAP_RATIO) + CAP_EXTRA_TOKENS;
  return Math.max(target, Math.min(modelOutputLimit, headroom));
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
