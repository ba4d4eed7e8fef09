/**
 * Consolidation (SPEC §5.5 step 4, §5.7): when live batches pile up or the clip-archive is over
 * its budget, which batches are merged into one higher-level batch.
 */

export { byCoverage, chooseBatchesToConsolidate, type ConsolidationCandidate, needsConsolidation } from './consolidate.js';
