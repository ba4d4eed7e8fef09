import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { realTranscriptsDir } from '../src/app/cli/shared-data.js';
import type { NormalizedMessage } from '../src/compaction/types.js';
import { findCompactBoundary, importTranscript } from '../src/importers/index.js';

/**
 * The eval's cases, read from the shared real transcripts beside the repository (never
 * copied into it): the long Claude Code sessions up to their compaction boundary, with
 * Claude Code's own summary of that span as the peer; the mini-swe-agent trajectories; the
 * longest τ-bench conversations.
 */

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_DATA_DIR = realTranscriptsDir();

export type Collection = 'claude-code' | 'mini-swe-agent' | 'tau-bench';

export interface PeerSummary {
  name: string;
  summary: string;
  /** the context size the peer measured when it compacted (its own tokenizer, system prompt and tools included) */
  preTokens: number | null;
  trigger: string | null;
}

export interface EvalCase {
  /** short, conversation-id safe: `cc-258c7280`, `swe-django__django-16560`, `tau-task-3-trial-0` */
  id: string;
  collection: Collection;
  source: string;
  messages: NormalizedMessage[];
  peer: PeerSummary | null;
  /** the session's working directory, when the transcript says it (the probes read relative paths against it) */
  cwd: string | null;
}

/** SWE-bench runs its agents in the repository checked out at /testbed. */
const SWE_BENCH_CWD = '/testbed';

/** The first `cwd` a Claude Code session records. */
function sessionCwd(text: string): string | null {
  const match = /"cwd":"((?:[^"\\]|\\.)*)"/.exec(text);
  return match ? (JSON.parse(`"${match[1]}"`) as string) : null;
}

const CLAUDE_CODE_SESSIONS = [
  '258c7280-ae70-4798-800f-63464d01a85d',
  '4d5611e5-241a-462a-8d15-5122611a9569',
  '8463c716-a2ea-4c14-9efa-87158ebd9f20',
  'ae4a77f8-aedd-4bc1-888f-c94edc91af04',
];
const QUICK_SESSION = '8463c716-a2ea-4c14-9efa-87158ebd9f20';
const QUICK_SWE = 'psf__requests-6028';
const TAU_FILE = 'tau-bench/gpt-4o-airline.json';
const TAU_LONGEST = 10;
const QUICK_TAU = 2;

function rawPath(dataDir: string, relative: string): string {
  const file = path.join(dataDir, 'raw', relative);
  if (!existsSync(file)) throw new Error(`transcript not found: ${file} (expected the shared data at ${dataDir})`);
  return file;
}

function claudeCodeCase(dataDir: string, session: string): EvalCase {
  const source = `spotter-claude-code/${session}.jsonl`;
  const text = readFileSync(rawPath(dataDir, source), 'utf8');
  const boundary = findCompactBoundary(text);
  if (!boundary || boundary.summary.length === 0) throw new Error(`${source} has no compact boundary with a summary`);
  const [conversation] = importTranscript(text, { format: 'claude-code', compactBoundary: 'stop' }).conversations;
  if (!conversation) throw new Error(`${source} imported no conversation`);
  return {
    id: `cc-${session.slice(0, 8)}`,
    collection: 'claude-code',
    source,
    messages: conversation.messages,
    peer: { name: 'Claude Code', summary: boundary.summary, preTokens: boundary.preTokens, trigger: boundary.trigger },
    cwd: sessionCwd(text),
  };
}

function sweCases(dataDir: string, only: string | null): EvalCase[] {
  const dir = path.join(dataDir, 'raw/mini-swe-agent-gemini3pro-swebench');
  const instances = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && (only === null || e.name === only))
    .map((e) => e.name)
    .sort();
  return instances.map((instance) => {
    const source = `mini-swe-agent-gemini3pro-swebench/${instance}/${instance}.traj.json`;
    const [conversation] = importTranscript(readFileSync(rawPath(dataDir, source), 'utf8'), { format: 'mini-swe-agent' }).conversations;
    if (!conversation) throw new Error(`${source} imported no conversation`);
    return { id: `swe-${instance}`, collection: 'mini-swe-agent', source, messages: conversation.messages, peer: null, cwd: SWE_BENCH_CWD };
  });
}

/** The τ-bench conversations with the most content (characters of all blocks), longest first. */
function tauCases(dataDir: string, count: number): EvalCase[] {
  const { conversations } = importTranscript(readFileSync(rawPath(dataDir, TAU_FILE), 'utf8'), { format: 'tau-bench' });
  const size = (messages: readonly NormalizedMessage[]) => JSON.stringify(messages.map((m) => m.content)).length;
  return conversations
    .map((c) => ({ c, size: size(c.messages) }))
    .sort((a, b) => b.size - a.size || a.c.id.localeCompare(b.c.id))
    .slice(0, count)
    .map(({ c }) => ({
      id: `tau-${c.id}`,
      collection: 'tau-bench',
      source: `${TAU_FILE}#${c.id}`,
      messages: c.messages,
      peer: null,
      cwd: null,
    }));
}

/** All cases of a run; `quick` takes one of each kind (one session, one trajectory, two τ-bench conversations). */
export function loadCorpus(options: { dataDir?: string; quick?: boolean } = {}): EvalCase[] {
  const dataDir = options.dataDir ?? DEFAULT_DATA_DIR;
  const quick = options.quick === true;
  const sessions = quick ? [QUICK_SESSION] : CLAUDE_CODE_SESSIONS;
  return [
    ...sessions.map((s) => claudeCodeCase(dataDir, s)),
    ...sweCases(dataDir, quick ? QUICK_SWE : null),
    ...tauCases(dataDir, quick ? QUICK_TAU : TAU_LONGEST),
  ];
}
