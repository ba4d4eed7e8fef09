import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

import { realTranscriptsDir } from '../src/app/cli/shared-data.js';
import type { NormalizedMessage } from '../src/compaction/types.js';
import { type ImportOptions, type ImportResult, importTranscript, type TranscriptFormat } from '../src/importers/index.js';
import { REPO_ROOT } from './repo-root.js';

/**
 * The shared real transcripts (read SOURCES.md there). They live beside the repository,
 * never inside it, and are read at test time.
 */
export const REAL_TRANSCRIPTS_DIR = realTranscriptsDir();

/** The hand-made sample session shipped in the repository (the demo's fallback). */
export const SAMPLE_CLAUDE_CODE_SESSION = path.resolve(REPO_ROOT, 'samples/claude-code-session.jsonl');

export interface RealTranscript {
  /** absolute path */
  path: string;
  format: TranscriptFormat;
  /** path under `raw/`, e.g. `spotter-claude-code/short.jsonl` */
  name: string;
}

/** Each collection under raw/ holds one format. */
const FORMAT_OF_COLLECTION: Record<string, TranscriptFormat> = {
  'spotter-claude-code': 'claude-code',
  'mini-swe-agent-gemini3pro-swebench': 'mini-swe-agent',
  'tau-bench': 'tau-bench',
};

export function hasRealTranscripts(): boolean {
  return existsSync(path.join(REAL_TRANSCRIPTS_DIR, 'raw'));
}

/** Every transcript file of the shared set (licenses and READMEs left out), sorted by name. */
export function listRealTranscripts(): RealTranscript[] {
  const raw = path.join(REAL_TRANSCRIPTS_DIR, 'raw');
  if (!existsSync(raw)) {
    throw new Error(
      `real transcripts not found at ${raw} (expected the shared data beside the repository: ../shared/data/real-transcripts)`,
    );
  }
  return walk(raw)
    .filter((file) => /\.(jsonl|json)$/.test(file))
    .map((file) => {
      const name = path.relative(raw, file).split(path.sep).join('/');
      const collection = name.split('/')[0] ?? '';
      const format = FORMAT_OF_COLLECTION[collection];
      if (!format) throw new Error(`no known format for ${name}: add its collection to FORMAT_OF_COLLECTION`);
      return { path: file, format, name };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Reads and imports one transcript; a relative path is taken under REAL_TRANSCRIPTS_DIR/raw. */
export function loadRealTranscript(file: string, options: ImportOptions = {}): ImportResult {
  const absolute = path.isAbsolute(file) ? file : path.join(REAL_TRANSCRIPTS_DIR, 'raw', file);
  return importTranscript(readFileSync(absolute, 'utf8'), { fileName: path.basename(absolute), ...options });
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    return statSync(full).isDirectory() ? walk(full) : [full];
  });
}

export interface PairingReport {
  /** tool_result ids with no tool_use earlier in the conversation */
  orphanResults: string[];
  /** tool_use ids never answered */
  unanswered: string[];
  /** tool_use ids opened more than once */
  duplicateUses: string[];
  /** true when the only unanswered call is in the last message (still pending) */
  onlyFinalPending: boolean;
}

/** Checks the tool pairing of a message list independently of the importers. */
export function toolPairingReport(messages: readonly NormalizedMessage[]): PairingReport {
  const opened = new Map<string, number>();
  const answered = new Set<string>();
  const orphanResults: string[] = [];
  const duplicateUses: string[] = [];
  messages.forEach((message, index) => {
    for (const block of message.content) {
      if (block.type === 'tool_use') {
        if (opened.has(block.id)) duplicateUses.push(block.id);
        opened.set(block.id, index);
      } else if (block.type === 'tool_result') {
        if (opened.has(block.tool_use_id)) answered.add(block.tool_use_id);
        else orphanResults.push(block.tool_use_id);
      }
    }
  });
  const unanswered = [...opened.keys()].filter((id) => !answered.has(id));
  const onlyFinalPending = unanswered.every((id) => opened.get(id) === messages.length - 1);
  return { orphanResults, unanswered, duplicateUses, onlyFinalPending };
}

/**
 * What a provider would reject in a history, checked the way the Messages API sees it once
 * consecutive tool-result messages are merged (OpenAI's `tool` messages after a reply form
 * one such run): every tool_use is answered in the message(s) directly after its reply, and
 * every tool_result answers a call of the reply directly before it, once. Calls of the last
 * message may still be pending. One line per problem; empty when the history is valid.
 */
export function providerPairingViolations(messages: readonly NormalizedMessage[]): string[] {
  const problems: string[] = [];
  const resultsOnly = (m: NormalizedMessage | undefined) =>
    m !== undefined && m.role !== 'assistant' && m.content.length > 0 && m.content.every((b) => b.type === 'tool_result');
  const answeredEver = new Set<string>();
  let pending: { at: number; open: Set<string> } | null = null;
  let inRun = false; // the previous message answered the pending reply and held only results
  messages.forEach((message, index) => {
    const answers = pending !== null && message.role !== 'assistant' && (index === pending.at + 1 || inRun);
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue;
      const id = block.tool_use_id;
      if (answeredEver.has(id)) problems.push(`message ${index}: a second result for ${id}`);
      else if (!answers || !pending?.open.has(id)) problems.push(`message ${index}: result for ${id} does not follow its call`);
      else pending.open.delete(id);
      answeredEver.add(id);
    }
    // The run of results ends at the first message holding anything else: calls still open then were never answered.
    if (pending && pending.open.size > 0 && (!answers || !resultsOnly(message))) {
      problems.push(`message ${pending.at}: calls ${[...pending.open].join(', ')} not answered in the next message`);
      pending = null;
    }
    inRun = answers && resultsOnly(message);
    const calls = message.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
    if (calls.length > 0) {
      pending = { at: index, open: new Set(calls) };
      inRun = false;
    }
  });
  const last = pending as { at: number; open: Set<string> } | null;
  if (last && last.open.size > 0 && last.at !== messages.length - 1) {
    problems.push(`message ${last.at}: calls ${[...last.open].join(', ')} never answered`);
  }
  return problems;
}
