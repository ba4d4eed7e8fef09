import { cleanAnthropicContent } from './blocks.js';
import { buildConversation } from './build.js';
import { classifyLine, contentText, usageOf, type ClassifiedLine, type MessageLine } from './claude-code-lines.js';
import { isRecord, parseJsonLines, type JsonLine } from './json.js';
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

/** One API message being assembled from consecutive lines. */
interface Turn {
  role: 'user' | 'assistant';
  /** lines with the same non-null key merge into this turn */
  key: string | null;
  blocks: unknown[];
  lines: number[];
  first: MessageLine;
  last: MessageLine;
}

/**
 * Imports a Claude Code session. Claude Code writes one content block per line, so lines of
 * one assistant reply (same `message.id`) merge back into one message, and consecutive
 * tool-result lines into one user message, as the API saw them. Progress, system,
 * snapshot and queue lines are dropped, and so is thinking.
 */
export function importClaudeCode(lines: JsonLine[], options: ImportOptions, fallbackId: string): ImportedConversation {
  const classified = lines.map(classifyLine);
  const entries = classified.flatMap((c) => (c.kind === 'message' ? [c.entry] : []));
  // A subagent transcript is sidechain from its first line to its last: it is its own conversation.
  const subagentFile = entries.length > 0 && entries.every((e) => e.isSidechain === true);
  const includeSidechains = options.includeSidechains ?? subagentFile;
  const stopAtBoundary = (options.compactBoundary ?? 'stop') === 'stop';
  const turns: Turn[] = [];
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
    addToTurns(turns, c.entry, blocks, c.line);
  }
  const boundary = boundaryIn(classified);
  const first = entries[0];
  return buildConversation({
    id: options.conversationId ?? conversationIdOf(first, subagentFile, fallbackId),
    raw: turns.map(toRawMessage),
    format: 'anthropic',
    sourceLines: turns.map((t) => t.lines),
    droppedLines: dropped,
    metadata: {
      ...(first?.sessionId !== undefined && { sessionId: first.sessionId }),
      ...(subagentFile && first?.agentId !== undefined && { agentId: first.agentId }),
      ...(first?.version !== undefined && { claudeCodeVersion: first.version }),
      ...(boundary && { compactBoundary: { lineIndex: boundary.lineIndex, preTokens: boundary.preTokens, trigger: boundary.trigger } }),
    },
  });
}

function addToTurns(turns: Turn[], entry: MessageLine, blocks: unknown[], line: number): void {
  const key = turnKey(entry, blocks);
  const last = turns.at(-1);
  if (last && key !== null && last.key === key) {
    last.blocks.push(...blocks);
    last.lines.push(line);
    last.last = entry;
    return;
  }
  turns.push({ role: entry.type, key, blocks: [...blocks], lines: [line], first: entry, last: entry });
}

function turnKey(entry: MessageLine, blocks: unknown[]): string | null {
  if (entry.type === 'assistant') return entry.message.id === undefined ? null : `assistant:${entry.message.id}`;
  return blocks.every((b) => isRecord(b) && b.type === 'tool_result') ? 'tool_results' : null;
}

function toRawMessage(turn: Turn): Record<string, unknown> {
  const { first } = turn;
  const metadata: Record<string, unknown> = {};
  if (first.uuid !== undefined) metadata.uuid = first.uuid;
  if (first.timestamp !== undefined) metadata.timestamp = first.timestamp;
  if (turn.role === 'assistant' && first.message.model !== undefined) metadata.model = first.message.model;
  if (first.isMeta === true) metadata.isMeta = true;
  if (first.isCompactSummary === true) metadata.isCompactSummary = true;
  // Streaming writes a usage snapshot on every line of a reply; the last one is final.
  const usage = turn.role === 'assistant' ? usageOf(turn.last) : undefined;
  return { role: turn.role, content: turn.blocks, metadata, ...(usage && { usage }) };
}

function conversationIdOf(first: MessageLine | undefined, subagentFile: boolean, fallbackId: string): string {
  if (first?.sessionId === undefined) return `claude-code-${fallbackId}`;
  return subagentFile && first.agentId !== undefined ? `${first.sessionId}-agent-${first.agentId}` : first.sessionId;
}
