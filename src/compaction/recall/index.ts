/**
 * What stays findable once history is archived (SPEC §5.9): the lines the recall index stores,
 * and the names the context no longer holds after a compaction.
 */

export type { ForgottenCounts } from './forgotten.js';
export { countForgotten, FORGOTTEN_MAX_NAMES, namesMissingFrom, spanNames } from './forgotten.js';
export { type SearchableText, searchableText } from './gram-sketch.js';
export type { RecallPiece } from './recall-lines.js';
export { answeredToolUseIds, focusLine, pieceLines, recallLines, recallPieces, toolCallNames } from './recall-lines.js';
