import { type Probe, PROBE_KINDS, type ProbeKind } from './derive.js';
import type { FileAction } from './shell.js';

/**
 * Whether a context answers a probe, from its text alone. Errors and commands must be there
 * verbatim (whitespace aside); constraints, requests and tasks contained once case, quotes
 * and markdown emphasis are set aside; a long line may be held by its first ~100
 * characters. A file is answered when a line names it (path, cwd-relative path or
 * unambiguous file name) and says what happened to it: the action word (or a synonym) on
 * that line, next to it, or in the heading its list sits under.
 */

export const PREFIX_CHARS = 100;
/** how far above a file's line its list heading may be */
const HEADING_REACH = 60;

export const ACTION_WORDS: Record<FileAction, RegExp> = {
  edited:
    /\b(edit(?:s|ed|ing)?|modif(?:y|ied|ies|ying|ication|ications)|updat(?:e|ed|es|ing)|chang(?:e|ed|es|ing)|patch(?:ed|es)?|fix(?:ed)?|rewr(?:ote|itten))\b/i,
  created: /\b(creat(?:e|ed|es|ing|ion)|add(?:ed|s)?|wr(?:ote|itten|ite)|new)\b/i,
  deleted: /\b(delet(?:e|ed|es|ing|ion)|remov(?:e|ed|es|ing|al))\b/i,
  moved: /\b(mov(?:e|ed|es|ing)|renam(?:e|ed|es|ing))\b/i,
};

const HEADING = /^\s*(#{1,6}\s|\*\*[^*]+\*\*:?\s*$|[A-Z][^.!?]{0,80}:\s*$|<[a-z_-]+>\s*$)/;

export interface PreparedContext {
  verbatim: string;
  prose: string;
  lines: string[];
}

export function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export function proseForm(text: string): string {
  return squash(text.toLowerCase().replace(/[‘’`]/g, "'").replace(/[“”]/g, '"').replace(/[*_']/g, ''));
}

function prefix(text: string): string {
  return text.length > PREFIX_CHARS ? text.slice(0, PREFIX_CHARS) : text;
}

export function prepareContext(text: string): PreparedContext {
  return { verbatim: squash(text), prose: proseForm(text), lines: text.split('\n') };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A name standing on its own: not the tail or head of a longer path or word. */
function namePattern(name: string): RegExp {
  return new RegExp(`(?<![\\w.-])${escape(name)}(?![\\w-]|\\.\\w)`);
}

function headingAbove(lines: readonly string[], index: number): string | null {
  for (let i = index - 1; i >= Math.max(0, index - HEADING_REACH); i -= 1) {
    if (HEADING.test(lines[i] as string)) return lines[i] as string;
  }
  return null;
}

function fileAnswered(probe: Extract<Probe, { kind: 'file' }>, context: PreparedContext): boolean {
  const patterns = probe.names.map(namePattern);
  const action = ACTION_WORDS[probe.action];
  const { lines } = context;
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] as string;
    if (!patterns.some((p) => p.test(line))) continue;
    const near = [lines[i - 1] ?? '', line, lines[i + 1] ?? ''].join('\n');
    if (action.test(near)) return true;
    const heading = headingAbove(lines, i);
    if (heading !== null && action.test(heading)) return true;
  }
  return false;
}

export function isAnswered(probe: Probe, context: PreparedContext): boolean {
  switch (probe.kind) {
    case 'file':
      return fileAnswered(probe, context);
    case 'error':
    case 'command':
    case 'recent-command':
      return context.verbatim.includes(prefix(squash(probe.text)));
    case 'constraint':
    case 'request':
    case 'task':
      return context.prose.includes(prefix(proseForm(probe.text)));
  }
}

export interface MissedProbe {
  kind: ProbeKind;
  text: string;
  action?: FileAction;
}

export interface ProbeScore {
  answered: number;
  total: number;
  /** answered / total; null when the span has no probe */
  score: number | null;
  byKind: Partial<Record<ProbeKind, { answered: number; total: number }>>;
  missed: MissedProbe[];
}

/** Scores a context against a span's probes; the misses are listed for inspection. */
export function scoreProbes(probes: readonly Probe[], contextText: string): ProbeScore {
  const context = prepareContext(contextText);
  const byKind: ProbeScore['byKind'] = {};
  const missed: MissedProbe[] = [];
  for (const kind of PROBE_KINDS) {
    for (const probe of probes.filter((p) => p.kind === kind)) {
      const entry = (byKind[kind] ??= { answered: 0, total: 0 });
      entry.total += 1;
      if (isAnswered(probe, context)) entry.answered += 1;
      else missed.push({ kind, text: probe.text, ...(probe.kind === 'file' ? { action: probe.action } : {}) });
    }
  }
  const total = probes.length;
  const answered = total - missed.length;
  return { answered, total, score: total === 0 ? null : answered / total, byKind, missed };
}
