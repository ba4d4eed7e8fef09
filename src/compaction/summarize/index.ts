/**
 * A chunk's summarizer request and its answer (SPEC §5.4, §5.6a): the prompt and its fence, the
 * identifiers to keep, reading a request back, checking and cutting the answer.
 */

export { completeCutAnswer, type CompletedAnswer, completeLines, holdsEverySection, keepCutAnswer, sectionsCutOff } from './cut-answer.js';
export {
  capIdentifiers,
  clipErrorLine,
  errorLines,
  extractIdentifiers,
  extractPaths,
  findMissingIdentifiers,
  IDENTIFIERS_HEADING,
  identifiersWithin,
  normalizeSpace,
  rankChunkIdentifiers,
  withoutIdentifierLists,
} from './identifiers.js';
export {
  operatorInstructions,
  type OperatorInstructionsRecord,
  operatorInstructionsResult,
  operatorText,
} from './operator-instructions.js';
export type { SectionName } from './prompt.js';
export {
  BATCH_SUMMARY_PREFIX,
  buildConsolidationRequest,
  buildRepairRequest,
  buildSummarizeRequest,
  requestedLengthTokens,
  SECTIONS,
} from './prompt.js';
export { readRequest } from './read-request.js';
export type { InvalidSummaryReason } from './validate-output.js';
export { validateSummaryOutput } from './validate-output.js';
