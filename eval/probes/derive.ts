import { lastErrorLines, lastFailedCommands } from './failures.js';
import { fileChanges } from './files.js';
import { lastCommands } from './recent.js';
import type { FileAction } from './shell.js';
import { type ProbeMessage, transcriptSteps } from './steps.js';
import { openTasks } from './tasks.js';
import { latestRequests, userConstraints } from './user.js';

/**
 * Continuation probes of a span: what an agent must be able to read in its context to go
 * on where the span left off. Each is answered from the context alone or not.
 */

/** `command`: a failing command; `recent-command`: one of the last commands run, however it ended. */
export type ProbeKind = 'file' | 'error' | 'command' | 'recent-command' | 'constraint' | 'request' | 'task';

export const PROBE_KINDS: readonly ProbeKind[] = ['file', 'error', 'command', 'recent-command', 'constraint', 'request', 'task'];

export type Probe =
  | {
      kind: 'file';
      /** the path as the transcript wrote it */
      text: string;
      action: FileAction;
      /** every way the context may name the file: the path, the cwd-relative path, the file name when unambiguous, a move's target */
      names: string[];
    }
  | { kind: Exclude<ProbeKind, 'file'>; text: string };

export interface SpanContext {
  /** the session's working directory, when known (relative paths are read against it) */
  cwd?: string | null;
}

function basename(path: string): string {
  return path.replace(/\/+$/, '').split('/').pop() ?? path;
}

function relativeTo(path: string, cwd: string | null | undefined): string | null {
  if (!cwd) return null;
  const base = cwd.endsWith('/') ? cwd : `${cwd}/`;
  return path.startsWith(base) ? path.slice(base.length) : null;
}

function fileNames(path: string, cwd: string | null | undefined, ambiguous: ReadonlySet<string>, to?: string): string[] {
  const names = new Set<string>([path]);
  const stripped = path.replace(/^\.\//, '');
  names.add(stripped);
  const relative = relativeTo(path, cwd);
  if (relative) names.add(relative);
  // a relative path may be named by its absolute form too
  if (cwd && !path.startsWith('/')) names.add(`${cwd.replace(/\/$/, '')}/${stripped}`);
  if (!ambiguous.has(basename(path))) names.add(basename(path));
  if (to) names.add(to);
  return [...names].filter((n) => n.length > 0);
}

/** Every probe of a span, by kind: files, errors, failing commands, the last commands, constraints, requests, tasks. */
export function deriveProbes(messages: readonly ProbeMessage[], context: SpanContext = {}): Probe[] {
  const span = messages.filter((m) => m.role !== 'system');
  const steps = transcriptSteps(span);
  const files = fileChanges(steps);
  const counts = new Map<string, number>();
  for (const f of files) counts.set(basename(f.path), (counts.get(basename(f.path)) ?? 0) + 1);
  const ambiguous = new Set([...counts].filter(([, n]) => n > 1).map(([name]) => name));
  return [
    ...files.map((f): Probe => ({ kind: 'file', text: f.path, action: f.action, names: fileNames(f.path, context.cwd, ambiguous, f.to) })),
    ...lastErrorLines(steps).map((text): Probe => ({ kind: 'error', text })),
    ...lastFailedCommands(steps).map((text): Probe => ({ kind: 'command', text })),
    ...lastCommands(steps).map((text): Probe => ({ kind: 'recent-command', text })),
    ...userConstraints(span).map((text): Probe => ({ kind: 'constraint', text })),
    ...latestRequests(span).map((text): Probe => ({ kind: 'request', text })),
    ...openTasks(steps).map((text): Probe => ({ kind: 'task', text })),
  ];
}
