/**
 * The state ledger (SPEC §5.6b): computed mechanically from a span's tool calls and user
 * turns, stored per batch, merged exactly, rendered at the head of the clip-archive.
 */
export { type LedgerCounts, ledgerCounts, type LedgerName, type LedgerNameKind, ledgerNames } from './counts.js';
export { extractLedger } from './extract.js';
export { mergeAllLedgers, mergeLedgers } from './merge.js';
export { commonDirectory, findSessionCwd, guessCwd, majorityDirectory, relativeTo } from './paths.js';
export { renderLedger, type RenderLedgerOptions } from './render.js';
export { DEFAULT_LEDGER_CAPS, escapeLedgerText, type LedgerCaps, type LedgerEscape } from './render-parts.js';
export type {
  CommandOutcome,
  FileAction,
  FileActions,
  Ledger,
  LedgerCommand,
  LedgerError,
  LedgerFile,
  LedgerOkCall,
  SeqText,
  TargetKind,
  TaskList,
  TaskStatus,
} from './schema.js';
export { COMMAND_OUTCOMES, emptyLedger, FILE_ACTIONS, LedgerSchema, SENTENCES_KEPT, TARGET_KINDS, TASK_STATUSES } from './schema.js';
