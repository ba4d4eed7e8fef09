/**
 * The state ledger (SPEC §5.6b): computed mechanically from a span's tool calls and user
 * turns, stored per batch, merged exactly, rendered at the head of the clip-archive.
 */
export { LedgerSchema, emptyLedger, FILE_ACTIONS, TASK_STATUSES, COMMAND_OUTCOMES, TARGET_KINDS } from './schema.js';
export type { Ledger, LedgerFile, LedgerCommand, LedgerError, LedgerOkCall, FileAction, FileActions, CommandOutcome, TaskList, TaskStatus, TargetKind, SeqText } from './schema.js';
export { extractLedger } from './extract.js';
export { mergeLedgers, mergeAllLedgers } from './merge.js';
export { renderLedger, type RenderLedgerOptions } from './render.js';
export { DEFAULT_LEDGER_CAPS, escapeLedgerText, type LedgerCaps, type LedgerEscape } from './render-parts.js';
export { ledgerCounts, ledgerNames, type LedgerCounts, type LedgerName, type LedgerNameKind } from './counts.js';
export { relativeTo, findSessionCwd, commonDirectory, majorityDirectory, guessCwd } from './paths.js';
