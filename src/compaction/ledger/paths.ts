import type { HistoryMessage } from '../types.js';
import { isChanged } from './counts.js';
import type { Ledger } from './schema.js';

/**
 * Paths stay in the ledger as the tools gave them; a reader is shown them relative to the
 * session's working directory when one is known, which is shorter and what an agent types.
 */

function trimSlashes(dir: string): string {
  return dir.length > 1 ? dir.replace(/\/+$/, '') : dir;
}

/** `path` relative to `cwd` when it lies inside it; unchanged otherwise (relative paths, other trees). */
export function relativeTo(cwd: string | undefined, path: string): string {
  if (cwd === undefined || cwd === '' || !path.startsWith('/')) return path;
  const dir = trimSlashes(cwd);
  if (path === dir) return '.';
  const prefix = dir === '/' ? '/' : `${dir}/`;
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

const CWD_PATTERNS: RegExp[] = [
  /(?:^|\n)[ \t>*-]*(?:Current working directory|Working directory|cwd)\s*[:=]\s*`?(\/[^\s'"`<>\]]*)/i,
  /\[Current working directory: (\/[^\]\s]*)\]/,
  /(\/[\w.@+-]+(?:\/[\w.@+-]+)*) \(this is the working directory/,
  /<uploaded_files>\s*(\/[^\s<]+)\s*<\/uploaded_files>/,
];

const TEXTS_SEARCHED = 8;

/** The working directory the session's first messages state (system prompt, task, a tool's trailer), if any. */
export function findSessionCwd(messages: readonly HistoryMessage[]): string | null {
  for (const message of messages.slice(0, TEXTS_SEARCHED)) {
    for (const block of message.content) {
      const text =
        block.type === 'text' ? block.text : block.type === 'tool_result' && typeof block.content === 'string' ? block.content : '';
      for (const pattern of CWD_PATTERNS) {
        const found = pattern.exec(text)?.[1];
        if (found !== undefined && found.length > 1) return trimSlashes(found);
      }
    }
  }
  return null;
}

/** The deepest directory holding every absolute path given (null when there is none or they share only `/`). */
export function commonDirectory(paths: readonly string[]): string | null {
  const absolute = paths.filter((p) => p.startsWith('/'));
  if (absolute.length === 0) return null;
  let common = (absolute[0] as string).split('/').slice(0, -1);
  for (const path of absolute.slice(1)) {
    const parts = path.split('/').slice(0, -1);
    let i = 0;
    while (i < common.length && i < parts.length && common[i] === parts[i]) i += 1;
    common = common.slice(0, i);
  }
  const dir = common.join('/');
  return dir === '' ? null : dir;
}

/** Share of the paths a directory must hold to be taken for the working directory. */
const MAJORITY = 0.6;

/**
 * The deepest directory holding at least `MAJORITY` of the absolute paths given (two or
 * more): one plan file written under the home directory must not pull the working directory
 * of a project up to the home directory. Null when no directory qualifies.
 */
export function majorityDirectory(paths: readonly string[]): string | null {
  const absolute = paths.filter((p) => p.startsWith('/'));
  if (absolute.length < 2) return commonDirectory(absolute);
  const counts = new Map<string, number>();
  for (const path of absolute) {
    const parts = path.split('/').slice(1, -1);
    for (let depth = 1; depth <= parts.length; depth += 1) {
      const dir = `/${parts.slice(0, depth).join('/')}`;
      counts.set(dir, (counts.get(dir) ?? 0) + 1);
    }
  }
  let best: string | null = null;
  for (const [dir, count] of counts) {
    if (count < MAJORITY * absolute.length) continue;
    if (best === null || dir.split('/').length > best.split('/').length) best = dir;
  }
  return best;
}

/**
 * A working directory read off the ledger when the messages state none: the deepest
 * directory holding most of the files the work changed (files read elsewhere, /tmp logs or
 * a library's sources, do not count), else most of every file. Paths outside it stay whole.
 */
export function guessCwd(ledger: Ledger): string | null {
  const changed = ledger.files.filter(isChanged).map((f) => f.path);
  return majorityDirectory(changed) ?? majorityDirectory(ledger.files.map((f) => f.path));
}
