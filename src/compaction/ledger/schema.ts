import { z } from 'zod';

/**
 * The state ledger (SPEC §5.6b): what the work did, read off the span's tool calls and user
 * turns, with no LLM. Stored per batch as jsonb and parsed back with `LedgerSchema.parse`.
 * Every list is kept in one canonical order (by seq, then by its key) so two ledgers of the
 * same facts compare equal however they were assembled (mergeLedgers relies on it).
 */

const Seq = z.number().int().nonnegative();
const Count = z.number().int().positive();

export const FILE_ACTIONS = ['read', 'created', 'edited', 'deleted', 'moved'] as const;
export type FileAction = (typeof FILE_ACTIONS)[number];

export const FileActionsSchema = z.object({
  read: Count.optional(),
  created: Count.optional(),
  edited: Count.optional(),
  deleted: Count.optional(),
  moved: Count.optional(),
});
export type FileActions = z.infer<typeof FileActionsSchema>;

export const LedgerFileSchema = z.object({
  path: z.string().min(1),
  actions: FileActionsSchema,
  /** seq of the latest call that touched the file (reads included) */
  lastSeq: Seq,
  /** seq of the latest change (anything but a read); lastChange, gist and movedTo describe that change */
  changedSeq: Seq.optional(),
  /** what the latest change was: `deleted` or `moved` means the path no longer holds the file */
  lastChange: z.enum(['created', 'edited', 'deleted', 'moved']).optional(),
  /** one line on the latest change when the tool input tells it (sizes, lines, the shell command) */
  gist: z.string().optional(),
  /** where the latest change moved the file */
  movedTo: z.string().optional(),
});
export type LedgerFile = z.infer<typeof LedgerFileSchema>;

export const COMMAND_OUTCOMES = ['ok', 'failed', 'unknown'] as const;
export type CommandOutcome = (typeof COMMAND_OUTCOMES)[number];

export const LedgerCommandSchema = z.object({
  /** the command's first line, trimmed and capped */
  line: z.string().min(1),
  /** outcome of the latest run */
  outcome: z.enum(COMMAND_OUTCOMES),
  exitCode: z.number().int().optional(),
  count: Count,
  lastSeq: Seq,
  /** the latest run's place among the calls of its message (absent for the first): commands of one message keep the order they ran in */
  lastAt: z.number().int().positive().optional(),
  /** seq of the latest run that succeeded: what resolves an error of this command */
  lastOkSeq: Seq.optional(),
});
export type LedgerCommand = z.infer<typeof LedgerCommandSchema>;

/** What an error was about: a command line, a file path, or a tool call's key argument ('' when it has none). */
export const TARGET_KINDS = ['command', 'path', 'call'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

export const LedgerErrorSchema = z.object({
  /** the line that reads as the error, verbatim (capped) */
  line: z.string().min(1),
  tool: z.string(),
  targetKind: z.enum(TARGET_KINDS),
  target: z.string(),
  /** seq of the latest call that failed with this line */
  seq: Seq,
  /** a later run of the same command, or of the same tool on the same target, succeeded */
  resolved: z.boolean(),
});
export type LedgerError = z.infer<typeof LedgerErrorSchema>;

/** The latest success of a tool on a path or call target (commands keep theirs in lastOkSeq). */
export const LedgerOkCallSchema = z.object({ tool: z.string(), targetKind: z.enum(['path', 'call']), target: z.string(), seq: Seq });
export type LedgerOkCall = z.infer<typeof LedgerOkCallSchema>;

export const SeqTextSchema = z.object({
  text: z.string().min(1),
  seq: Seq,
  /** its place among the sentences of its message (absent for the first), so they read in the order said */
  at: z.number().int().positive().optional(),
});
export type SeqText = z.infer<typeof SeqTextSchema>;

export const TASK_STATUSES = ['pending', 'in_progress', 'completed'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const TaskListSchema = z.object({
  items: z.array(z.object({ text: z.string(), status: z.enum(TASK_STATUSES) })),
  seq: Seq,
});
export type TaskList = z.infer<typeof TaskListSchema>;

/** An image of the span (§5.6c), named by the reference recall finds its archived original by. */
export const LedgerImageSchema = z.object({
  /** `img:` and 12 hex digits of its SHA-256 (compaction/images.ts) */
  ref: z.string().min(1),
  /** name, media type, pixels and bytes, as far as the block tells them */
  description: z.string(),
  /** who sent it: the user, the assistant, or a tool's result */
  from: z.enum(['user', 'assistant', 'tool']),
  /** the latest message that holds it */
  seq: Seq,
});
export type LedgerImage = z.infer<typeof LedgerImageSchema>;

/** A sub-agent the span started (Claude Code's Task/Agent tool): its task and how it ended. */
export const LedgerAgentSchema = z.object({
  /** the task as the call described it */
  task: z.string().min(1),
  /** the kind of sub-agent asked for, when named */
  type: z.string().optional(),
  /** running: no result in the history yet */
  status: z.enum(['running', 'done', 'failed']),
  /** the first line of its final answer (capped) */
  result: z.string().optional(),
  seq: Seq,
});
export type LedgerAgent = z.infer<typeof LedgerAgentSchema>;

/** Constraints and requests a ledger keeps of each kind, the newest: far above what any view shows (the clip-archive 12 and 3). */
export const SENTENCES_KEPT = 100;

export const LedgerSchema = z.object({
  files: z.array(LedgerFileSchema),
  commands: z.array(LedgerCommandSchema),
  errors: z.array(LedgerErrorSchema),
  okCalls: z.array(LedgerOkCallSchema),
  instructions: z.object({
    /** the user's sentences that constrain the work, verbatim, newest last (the newest SENTENCES_KEPT) */
    constraints: z.array(SeqTextSchema),
    /** the first sentence of each user request, newest last (the newest SENTENCES_KEPT) */
    requests: z.array(SeqTextSchema),
  }),
  /** the latest todo list the agent kept */
  tasks: TaskListSchema.nullable(),
  /** the span's images, by reference (ledgers stored before images were kept have none) */
  images: z.array(LedgerImageSchema).default([]),
  /** the sub-agents the span started (ledgers stored before they were kept have none) */
  agents: z.array(LedgerAgentSchema).default([]),
});
export type Ledger = z.infer<typeof LedgerSchema>;

export function emptyLedger(): Ledger {
  return {
    files: [],
    commands: [],
    errors: [],
    okCalls: [],
    instructions: { constraints: [], requests: [] },
    tasks: null,
    images: [],
    agents: [],
  };
}
