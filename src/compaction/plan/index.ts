/**
 * Which part of the history a compaction compresses, and how (SPEC §5.2, §5.3): units,
 * importance scores, the split, the tiers, the selection, chunks, output budgets and the plan.
 */

export {
  chunkOutputBudget,
  chunkOutputBudgets,
  consolidationBudgetWithin,
  namedIdentifierCount,
  narrativeBudget,
  outputCap,
  repairListChars,
} from './budget.js';
export { planNative } from './native.js';
export { planCompaction, resolveTarget } from './plan.js';
export { summaryEstimate } from './select.js';
export { chooseStrategy, estimateNativeMs, type StrategyDecision, type StrategyInputs } from './strategy.js';
