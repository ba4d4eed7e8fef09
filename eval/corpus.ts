import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { realTranscriptsDir } from '../src/app/cli/shared-data.js';
import type { NormalizedMessage } from '../src/compaction/types.js';
import { findCompactBoundary, type ImportedConversation, importTranscript } from '../src/importers/index.js';
import { type EvalHalf, splitHalves } from './split.js';

/**
 * The eval's cases, read from the shared real transcripts beside the repository (never
 * copied into it): the long Claude Code sessions up to their compaction boundary, with
 * Claude Code's own summary of that span as the peer; the mini-swe-agent trajectories; the
 * longest τ-bench conversations. Each case is in the development or the held-out half (split.ts).
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
  /** the half of the corpus the case is in (split.ts): tuned on, or held out */
  half: EvalHalf;
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

/** A case as read, before the split gives it its half. */
type ReadCase = Omit<EvalCase, 'half'>;

const claudeCodeId = (session: string) => `cc-${session.slice(0, 8)}`;
const sweId = (instance: string) => `swe-${instance}`;
const tauId = (conversationId: string) => `tau-${conversationId}`;

function claudeCodeCase(dataDir: string, session: string): ReadCase {
  const source = `spotter-claude-code/${session}.jsonl`;
  const text = readFileSync(rawPath(dataDir, source), 'utf8');
  const boundary = findCompactBoundary(text);
  if (!boundary || boundary.summary.length === 0) throw new Error(`${source} has no compact boundary with a summary`);
  const [conversation] = importTranscript(text, { format: 'claude-code', compactBoundary: 'stop' }).conversations;
  if (!conversation) throw new Error(`${source} imported no conversation`);
  return {
    id: claudeCodeId(session),
    collection: 'claude-code',
    source,
    messages: conversation.messages,
    peer: { name: 'Claude Code', summary: boundary.summary, preTokens: boundary.preTokens, trigger: boundary.trigger },
    cwd: sessionCwd(text),
  };
}

/** Every SWE-bench instance of the mini-swe-agent collection, by name. */
function sweInstances(dataDir: string): string[] {
  const dir = path.join(dataDir, 'raw/mini-swe-agent-gemini3pro-swebench');
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

function sweCase(dataDir: string, instance: string): ReadCase {
  const source = `mini-swe-agent-gemini3pro-swebench/${instance}/${instance}.traj.json`;
  const [conversation] = importTranscript(readFileSync(rawPath(dataDir, source), 'utf8'), { format: 'mini-swe-agent' }).conversations;
  if (!conversation) throw new Error(`${source} imported no conversation`);
  return { id: sweId(instance), collection: 'mini-swe-agent', source, messages: conversation.messages, peer: null, cwd: SWE_BENCH_CWD };
}

/** The τ-bench conversations of a full run: those with the most content (characters of all blocks), longest first. */
function longestTau(dataDir: string): ImportedConversation[] {
  const { conversations } = importTranscript(readFileSync(rawPath(dataDir, TAU_FILE), 'utf8'), { format: 'tau-bench' });
  const size = (messages: readonly NormalizedMessage[]) => JSON.stringify(messages.map((m) => m.content)).length;
  return conversations
    .map((c) => ({ c, size: size(c.messages) }))
    .sort((a, b) => b.size - a.size || a.c.id.localeCompare(b.c.id))
    .slice(0, TAU_LONGEST)
    .map(({ c }) => c);
}

function tauCase(conversation: ImportedConversation): ReadCase {
  return {
    id: tauId(conversation.id),
    collection: 'tau-bench',
    source: `${TAU_FILE}#${conversation.id}`,
    messages: conversation.messages,
    peer: null,
    cwd: null,
  };
}

/**
 * All cases of a run, each with its half; `quick` takes one of each kind (one session, one
 * trajectory, two τ-bench conversations). The halves are split over each collection's cases of
 * a full run, so a quick run's cases keep theirs.
 */
export function loadCorpus(options: { dataDir?: string; quick?: boolean } = {}): EvalCase[] {
  const dataDir = options.dataDir ?? DEFAULT_DATA_DIR;
  const quick = options.quick === true;
  const instances = sweInstances(dataDir);
  const tau = longestTau(dataDir);
  const halves = new Map([
    ...splitHalves(CLAUDE_CODE_SESSIONS.map(claudeCodeId)),
    ...splitHalves(instances.map(sweId)),
    ...splitHalves(tau.map((c) => tauId(c.id))),
  ]);
  const cases: ReadCase[] = [
    ...(quick ? [QUICK_SESSION] : CLAUDE_CODE_SESSIONS).map((s) => claudeCodeCase(dataDir, s)),
    ...(quick ? instances.filter((i) => i === QUICK_SWE) : instances).map((i) => sweCase(dataDir, i)),
    ...tau.slice(0, quick ? QUICK_TAU : TAU_LONGEST).map(tauCase),
  ];
  return cases.map((c) => {
    const half = halves.get(c.id);
    if (half === undefined) throw new Error(`${c.id} is in no half of the split`);
    return { ...c, half };
  });
}
