import type { NormalizedMessage } from '../compaction/types.js';

/** The transcript formats the importers understand. */
export type TranscriptFormat = 'claude-code' | 'openai' | 'anthropic' | 'mini-swe-agent' | 'openhands' | 'tau-bench' | 'compactd-export';

export const TRANSCRIPT_FORMATS: readonly TranscriptFormat[] = [
  'claude-code',
  'openai',
  'anthropic',
  'mini-swe-agent',
  'openhands',
  'tau-bench',
  'compactd-export',
];

export interface ImportOptions {
  /** Skip detection and parse the text as this format. */
  format?: TranscriptFormat;
  /** Only a hint for detection (e.g. `.jsonl`, `.traj.json`); the text is never read from it. */
  fileName?: string;
  /**
   * Claude Code: include `isSidechain` lines of a main session (subagent turns). Default:
   * excluded; a file made only of sidechain lines (a subagent transcript) is imported whole.
   */
  includeSidechains?: boolean;
  /**
   * Claude Code: at the first `compact_boundary`, `stop` (default) keeps only the messages
   * before it; `include` goes on past it, keeping Claude Code's own summary message.
   */
  compactBoundary?: 'stop' | 'include';
  /** Overrides the conversation id of single-conversation formats. */
  conversationId?: string;
}

export interface ImportStats {
  messages: number;
  /** tool_use ids answered by a later tool_result */
  toolPairs: number;
  /** tool_use ids no tool_result answers (normally at most one, still pending at the end) */
  unmatchedToolUses: number;
  /** input lines, entries or events that produced no message content (progress, system, …) */
  droppedLines: number;
  /** tool_result blocks whose tool_use was never seen, kept as text so the history stays valid */
  orphanedToolResults: number;
  /** tool_use ids the source reused, renamed `<id>_<n>` (with their results) to keep ids unique */
  renamedToolUseIds: number;
  /** second tool_result blocks for a call already answered, dropped (a provider accepts one answer per call) */
  duplicateToolResults: number;
  /** calls the transcript never answered although a message follows, given an error result */
  synthesizedToolResults: number;
}

export interface ImportedConversation {
  id: string;
  messages: NormalizedMessage[];
  stats: ImportStats;
  /** The model the transcript ran on (Claude Code: the last model of the session), when it says. */
  model?: string;
  /** Facts about the source worth keeping (session id, reward, exit status, …). */
  metadata: Record<string, unknown>;
}

export interface ImportResult {
  format: TranscriptFormat;
  conversations: ImportedConversation[];
}
