import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import type { NormalizedMessage } from '../../../src/compaction/types.js';
import { findCompactBoundary, importTranscript } from '../../../src/importers/index.js';
import { countTokens } from '../../../src/lib/count-tokens.js';
import { REAL_TRANSCRIPTS_RAW } from '../../lib/conversations.js';

/**
 * A long Claude Code session as the replay reads it: whole, past Claude Code's own
 * compaction (its summary message left out, so every arm continues over the same turns),
 * with what the session's real compaction tells: where it happened, Claude Code's count of
 * the context there, its summary's length and the instruction it summarized with.
 */

export interface ReplaySession {
  id: string;
  messages: NormalizedMessage[];
  /** the session's working directory (the probes read relative paths against it) */
  cwd: string | null;
  /** messages before Claude Code's compaction */
  boundaryIndex: number;
  /** Claude Code's count of the context when it compacted (its system prompt and tools included) */
  preTokens: number;
  /** Claude Code's summary at its compaction, as the session continued from it (its own lead-in included) */
  summary: string;
  /** the length of Claude Code's summary, in tokens */
  summaryTokens: number;
  /** the instruction Claude Code summarized with: the user turn of its compaction request */
  compactInstruction: string;
  /** one agent call each: the messages before `start` are the context, [start, end) the assistant's answer */
  turns: Turn[];
}

export interface Turn {
  start: number;
  end: number;
}

const SESSIONS_DIR = path.join(REAL_TRANSCRIPTS_RAW, 'spotter-claude-code');

/** Loads a session; `maxMessages` keeps its first messages only (the quick variant). */
export function loadReplaySession(id: string, maxMessages?: number): ReplaySession {
  const text = readFileSync(path.join(SESSIONS_DIR, `${id}.jsonl`), 'utf8');
  const boundary = findCompactBoundary(text);
  if (!boundary?.preTokens || boundary.summary === '') throw new Error(`session ${id}: no compact boundary with a count and a summary`);
  const imported = importTranscript(text, { format: 'claude-code', compactBoundary: 'include' }).conversations[0];
  if (!imported) throw new Error(`session ${id}: no conversation imported`);
  const summaryAt = imported.messages.findIndex((m) => m.metadata?.['isCompactSummary'] === true);
  if (summaryAt < 0) throw new Error(`session ${id}: Claude Code's summary message was not imported`);
  const whole = imported.messages.filter((_, i) => i !== summaryAt);
  const messages = maxMessages === undefined ? whole : whole.slice(0, maxMessages);
  return {
    id,
    messages,
    cwd: sessionCwd(text),
    boundaryIndex: summaryAt,
    preTokens: boundary.preTokens,
    summary: boundary.summary,
    summaryTokens: countTokens(boundary.summary),
    compactInstruction: compactInstruction(id),
    turns: agentTurns(messages),
  };
}

/** Runs of assistant messages: each is one model call over everything before it. */
export function agentTurns(messages: readonly NormalizedMessage[]): Turn[] {
  const turns: Turn[] = [];
  for (let i = 0; i < messages.length; i += 1) {
    if (messages[i]?.role !== 'assistant' || i === 0 || messages[i - 1]?.role === 'assistant') continue;
    let end = i + 1;
    while (messages[end]?.role === 'assistant') end += 1;
    turns.push({ start: i, end });
  }
  return turns;
}

/** The first `cwd` the session records. */
function sessionCwd(text: string): string | null {
  const match = /"cwd":"((?:[^"\\]|\\.)*)"/.exec(text);
  return match ? (JSON.parse(`"${match[1]}"`) as string) : null;
}

/**
 * Claude Code's summarization instruction, verbatim from the session's `agent-acompact-*`
 * file (the request it compacted with): its last user turn that is not a meta reminder.
 */
function compactInstruction(id: string): string {
  const dir = path.join(SESSIONS_DIR, id, 'subagents');
  const file = readdirSync(dir).find((name) => name.startsWith('agent-acompact-'));
  if (!file) throw new Error(`session ${id}: no agent-acompact file in ${dir}`);
  const lines = readFileSync(path.join(dir, file), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { type?: string; isMeta?: boolean; message?: { content?: unknown } });
  const asked = lines.filter((line) => line.type === 'user' && line.isMeta !== true && typeof line.message?.content === 'string').pop();
  const instruction = asked?.message?.content;
  if (typeof instruction !== 'string') throw new Error(`session ${id}: ${file} holds no summarization instruction`);
  return instruction;
}
