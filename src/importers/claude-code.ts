import { cleanAnthropicContent } from './blocks.js';
import { buildConversation } from './build.js';
import { type ClassifiedLine, classifyLine, contentText, type MessageLine } from './claude-code-lines.js';
import { rebuildMessages, type SessionLine } from './claude-code-turns.js';
import { type JsonLine, parseJsonLines } from './json.js';
import type { ImportedConversation, ImportOptions } from './types.js';

/** Claude Code's own compaction in a session: the boundary line and the summary that replaced the history. */
export interface CompactBoundary {
  /** 0-based index of the `compact_boundary` line among the file's lines (SOURCES.md's "line 1256" is index 1255). */
  lineIndex: number;
  /** Context size Claude Code measured when it compacted; null if the line does not say. */
  preTokens: number | null;
  /** `auto` or `manual`; null if the line does not say. */
  trigger: string | null;
  /** Text of the `isCompactSummary` user line after the boundary; '' if there is none. */
  summary: string;
}

/** Finds the first `compact_boundary` of a Claude Code session JSONL text, or null if it never compacted. */
export function findCompactBoundary(text: string): CompactBoundary | null {
  return boundaryIn(parseJsonLines(text).map(classifyLine));
}

function boundaryIn(classified: ClassifiedLine[]): CompactBoundary | null {
  const at = classified.findIndex((c) => c.kind === 'boundary');
  const line = classified[at];
  if (!line || line.kind !== 'boundary') return null;
  const summaryLine = classified.slice(at + 1).find((c) => c.kind === 'message' && c.entry.isCompactSummary === true);
  return {
    lineIndex: line.line - 1,
    preTokens: line.entry.compactMetadata?.preTokens ?? null,
    trigger: line.entry.compactMetadata?.trigger ?? null,
    summary: summaryLine?.kind === 'message' ? contentText(summaryLine.entry.message.content) : '',
  };
}

/**
 * Imports a Claude Code session: its API messages rebuilt as the provider saw them (see
 * rebuildMessages). Progress, system, snapshot and queue lines are dropped, and so is thinking.
 */
export function importClaudeCode(lines: JsonLine[], options: ImportOptions, fallbackId: string): ImportedConversation {
  const classified = lines.map(classifyLine);
  const entries = classified.flatMap((c) => (c.kind === 'message' ? [c.entry] : []));
  // A subagent transcript is sidechain from its first line to its last: it is its own conversation.
  const subagentFile = entries.length > 0 && entries.every((e) => e.isSidechain === true);
  const includeSidechains = options.includeSidechains ?? subagentFile;
  const stopAtBoundary = (options.compactBoundary ?? 'stop') === 'stop';
  const kept: SessionLine[] = [];
  let dropped = 0;
  for (const c of classified) {
    if (c.kind === 'boundary' && stopAtBoundary) break;
    if (c.kind !== 'message' || (c.entry.isSidechain === true && !includeSidechains)) {
      dropped++;
      continue;
    }
    const blocks = cleanAnthropicContent(c.entry.message.content);
    if (blocks.length === 0) {
      dropped++;
      continue;
    }
    kept.push({ entry: c.entry, blocks, line: c.line });
  }
  const rebuilt = rebuildMessages(kept);
  // Subagent turns ran on their own (often smaller) model; the session's is the main chain's.
  const model = sessionModel(kept.filter((l) => subagentFile || l.entry.isSidechain !== true));
  const boundary = boundaryIn(classified);
  const first = entries[0];
  return buildConversation({
    id: options.conversationId ?? conversationIdOf(first, subagentFile, fallbackId),
    raw: rebuilt.messages.map((m) => m.raw),
    format: 'anthropic',
    sourceLines: rebuilt.messages.map((m) => m.lines),
    droppedLines: dropped,
    extraStats: rebuilt.stats,
    model,
    metadata: {
      ...(first?.sessionId !== undefined && { sessionId: first.sessionId }),
      ...(subagentFile && first?.agentId !== undefined && { agentId: first.agentId }),
      ...(first?.version !== undefined && { claudeCodeVersion: first.version }),
      ...(boundary && { compactBoundary: { lineIndex: boundary.lineIndex, preTokens: boundary.preTokens, trigger: boundary.trigger } }),
    },
  });
}

/**
 * The model the session ran on last (a session can switch with /model; it goes on with the
 * last one). Claude Code marks replies it made up itself (API errors) as `<synthetic>`.
 */
function sessionModel(lines: readonly SessionLine[]): string | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const model = lines[i]?.entry.type === 'assistant' ? lines[i]?.entry.message.model : undefined;
    if (model !== undefined && model !== '' && !model.startsWith('<')) return model;
  }
  return undefined;
}

function conversationIdOf(first: MessageLine | undefined, subagentFile: boolean, fallbackId: string): string {
  if (first?.sessionId === undefined) return `claude-code-${fallbackId}`;
  return subagentFile && first.agentId !== undefined ? `${first.sessionId}-agent-${first.agentId}` : first.sessionId;
}
