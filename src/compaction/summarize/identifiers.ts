import { blockCommands, extractIds, isObservation } from '../identifier-sources.js';
import { renderMessageText, toolNamesOf, toolResultText } from '../render.js';
import type { HistoryMessage } from '../types.js';

/**
 * Identifier check (SPEC §5.6a): the exact strings an agent needs to continue (paths,
 * URLs, error messages, ticket ids, commands, codes, dates, e-mail addresses, tool names,
 * quoted strings, numbers with units) are extracted from a chunk's source. The highest
 * ranked are named in the request; whatever the answer still lacks is appended verbatim.
 */

export type IdentifierKind = 'error' | 'path' | 'url' | 'ticket' | 'command' | 'id' | 'tool' | 'quoted' | 'number';

// a backslash never belongs to a URL: in tool outputs that hold JSON text it is the escape of a following quote
const URL = /\bhttps?:\/\/[^\s<>"'`)\]}\\]+/g;
const ABSOLUTE_PATH = /(?<![\w/.~-])(?:~|\.{1,2})?\/(?:[\w.@+-]+\/)*[\w.@+-]+/g;
const RELATIVE_PATH = /(?<![\w/.-])(?:[\w.@-]+\/)+[\w@-][\w.@-]*\.[A-Za-z0-9]{1,8}\b/g;
const TICKET = /(?<![\w-])(?:[A-Z][A-Z0-9]{1,9}-\d{1,6}|#\d{2,7})\b/g;
const BACKTICKED = /`([^`\n]{2,80})`/g;
const QUOTED = /"([^"\n]{3,80})"/g;
const NUMBER_WITH_UNIT =
  /(?<![\w.])\d+(?:\.\d+)?(?:\s?(?:ms|sec|seconds|minutes|hours|days|KB|MB|GB|TB|KiB|MiB|GiB|bytes|tokens)\b|(?:s|m|h|k|%|px)(?![\w%]))/g;
const ERROR_LINE = [
  /^(?:\*\*\s*\()?[A-Z][\w.]*(?:Error|Exception|Failure)\b\)?(?::|\s|$)/,
  /^(?:error|fatal|panic|fail|failed|failure)(?:\[[\w-]+\])?(?::|\s)/i,
  /^E {2,}\S/,
  /^Traceback \(most recent call last\)/,
  /^\S+:\d+(?::\d+)?:?\s*(?:error|fatal)\b/i,
  /\b\w*(?:Error|Exception): \S/,
];
const MAX_ERROR_CHARS = 160;

/** Trailing punctuation is prose; a trailing backslash is the escape of a quote in JSON-escaped text. */
function trimPunctuation(value: string): string {
  let end = value.length;
  while (end > 0 && isTrailingPunctuation(value.charCodeAt(end - 1))) end -= 1;
  return end === value.length ? value : value.slice(0, end);
}

/** . , ; : ! ? ' " and backslash */
const isTrailingPunctuation = (code: number): boolean =>
  code === 46 || code === 44 || code === 59 || code === 58 || code === 33 || code === 63 || code === 39 || code === 34 || code === 92;

/**
 * Each match of the global `pattern` (its `group`), trimmed of trailing punctuation, longer
 * than one character, handed to `add` in order. An `exec` loop: `matchAll` clones the regex
 * on every call. `add` must not run the same pattern (its lastIndex is the loop's).
 */
function eachMatch(text: string, pattern: RegExp, add: (value: string) => void, group = 0): void {
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    if (m[0].length === 0) pattern.lastIndex += 1;
    const value = trimPunctuation(m[group] ?? '');
    if (value.length > 1) add(value);
  }
  pattern.lastIndex = 0;
}

function matches(text: string, pattern: RegExp, group = 0): string[] {
  const out: string[] = [];
  eachMatch(text, pattern, (value) => out.push(value), group);
  return out;
}

/** A path-looking string worth checking: absolute with two segments or an extension, or relative with both. */
function isPathLike(value: string): boolean {
  const segments = value.split('/').filter((s) => s.length > 0 && s !== '.' && s !== '..' && s !== '~');
  return segments.length >= 2 || /\.[A-Za-z0-9]{1,8}$/.test(value);
}

/** Long error lines are cut at a word boundary: the head names the error, and a summary can hold it. */
export function clipErrorLine(line: string): string {
  if (line.length <= MAX_ERROR_CHARS) return line;
  const space = line.lastIndexOf(' ', MAX_ERROR_CHARS);
  return line.slice(0, space > MAX_ERROR_CHARS / 2 ? space : MAX_ERROR_CHARS);
}

/**
 * A word every ERROR_LINE pattern needs (a line starting with `E  ` aside): a line without one
 * is no error line, and one test of this spares the six patterns on most lines of an output.
 */
const MAY_BE_ERROR = /error|exception|fail|fatal|panic|traceback|E {2}/i;

/** Lines that read as error messages (exceptions, compiler and test-runner failures), trimmed. */
export function errorLines(text: string): string[] {
  const out: string[] = [];
  if (!MAY_BE_ERROR.test(text)) return out;
  for (const raw of text.split('\n')) {
    if (!MAY_BE_ERROR.test(raw)) continue;
    const line = raw.trim();
    if (line.length >= 6 && ERROR_LINE.some((pattern) => pattern.test(line))) out.push(clipErrorLine(line));
  }
  return out;
}

/** The text with its URLs blanked (their paths are not paths); no copy when it holds none. */
const withoutUrls = (text: string): string => (text.includes('://') ? text.replace(URL, ' ') : text);

/** A character either path pattern can match: [A-Za-z0-9_.@+~/-]. */
const isPathChar = (code: number): boolean =>
  (code >= 97 && code <= 122) ||
  (code >= 65 && code <= 90) ||
  (code >= 45 && code <= 57) ||
  code === 95 ||
  code === 64 ||
  code === 43 ||
  code === 126;

/**
 * The runs of path characters that hold a `/`: the only places a path can match. The
 * patterns' lookbehinds and `\b` read the same at a run's edges as in the whole text (the
 * character beyond is no path character, so no word character), so matching each run gives
 * the whole text's matches, in order, while the patterns never scan the prose between.
 */
function slashRuns(text: string): string[] {
  const runs: string[] = [];
  for (let slash = text.indexOf('/'); slash !== -1;) {
    let start = slash;
    while (start > 0 && isPathChar(text.charCodeAt(start - 1))) start -= 1;
    let end = slash + 1;
    while (end < text.length && isPathChar(text.charCodeAt(end))) end += 1;
    runs.push(text.slice(start, end));
    slash = text.indexOf('/', end);
  }
  return runs;
}

/** Absolute then relative path matches of a text (URLs blanked), each handed to `add`. */
function eachPathMatch(text: string, add: (value: string) => void): void {
  const runs = slashRuns(withoutUrls(text));
  for (const run of runs) eachMatch(run, ABSOLUTE_PATH, add);
  for (const run of runs) eachMatch(run, RELATIVE_PATH, add);
}

export function extractPaths(text: string): string[] {
  const out: string[] = [];
  eachPathMatch(text, (value) => {
    if (isPathLike(value)) out.push(value);
  });
  return out;
}

/**
 * The paths of a text added to `into`, in extractPaths' order; a path already there is not
 * checked again (a tool output names the same file on many lines).
 */
function collectPaths(text: string, into: Set<string>): void {
  eachPathMatch(text, (value) => {
    if (!into.has(value) && isPathLike(value)) into.add(value);
  });
}

/** URLs need a scheme: a text without `://` has none (the usual case) and the pattern is not run. */
function collectUrls(text: string, into: Set<string>): void {
  if (text.includes('://')) eachMatch(text, URL, (value) => into.add(value));
}

function byKind(text: string): Record<IdentifierKind, string[]> {
  return {
    error: errorLines(text),
    path: extractPaths(text),
    url: text.includes('://') ? matches(text, URL) : [],
    ticket: matches(text, TICKET),
    command: [],
    id: extractIds(text),
    tool: [],
    quoted: [...matches(text, BACKTICKED, 1), ...matches(text, QUOTED, 1)].map((v) => v.trim()).filter((v) => v.length > 1),
    number: matches(text, NUMBER_WITH_UNIT),
  };
}

const PRIORITY: readonly IdentifierKind[] = ['error', 'path', 'url', 'ticket', 'command', 'id', 'tool', 'quoted', 'number'];

function dedupe(values: Iterable<string>): string[] {
  return [...new Set(values)];
}

/** Every identifier in a text, deduplicated, in priority order (errors, paths, URLs, …) then first appearance. */
export function extractIdentifiers(text: string): string[] {
  const found = byKind(text);
  return dedupe(PRIORITY.flatMap((kind) => found[kind]));
}

/** A chunk's messages as plain text with role labels, for extraction and display. */
export function renderChunkText(messages: readonly HistoryMessage[]): string {
  const names = toolNamesOf(messages);
  return messages.map((m) => `${m.role}:\n${renderMessageText(m, names)}`).join('\n\n');
}

/** Keys whose values are file contents or edit bodies: code, not identifiers the agent cited. */
const CONTENT_KEYS = /^(content|old_string|new_string|new_source|patch|diff)$/;

/** String values of a tool input (nested), skipping file contents. */
export function inputStrings(input: unknown, depth = 0): string[] {
  if (typeof input === 'string') return [input];
  if (depth > 4 || typeof input !== 'object' || input === null) return [];
  const entries = Array.isArray(input) ? input.map((v) => ['', v] as const) : Object.entries(input);
  return entries.flatMap(([key, value]) => (CONTENT_KEYS.test(key) ? [] : inputStrings(value, depth + 1)));
}

/** A chunk's identifiers in rank order, with the per-kind lists the cap shares out (each without repeats). */
export interface RankedIdentifiers {
  ordered: string[];
  byKind: Record<IdentifierKind, string[]>;
}

type KindSets = Record<IdentifierKind, Set<string>>;

const emptyKindSets = (): KindSets => ({
  error: new Set(),
  path: new Set(),
  url: new Set(),
  ticket: new Set(),
  command: new Set(),
  id: new Set(),
  tool: new Set(),
  quoted: new Set(),
  number: new Set(),
});

function addAll(into: Set<string>, values: Iterable<string>): void {
  for (const value of values) into.add(value);
}

/**
 * Every identifier of a chunk, ranked. Tool outputs are mostly file contents and listings,
 * so only their errors and URLs rank with the rest and their paths come last; quoted strings,
 * numbers and codes come from what was said or passed to a tool (inputs are JSON and code).
 *
 * Each kind is collected as a set: the ranking and the cap only ever read a kind's values in
 * first-appearance order without repeats, and a value seen before is not checked again.
 */
export function rankChunkIdentifiers(messages: readonly HistoryMessage[]): RankedIdentifiers {
  const primary = emptyKindSets();
  const outputPaths = new Set<string>();
  for (const message of messages) {
    for (const block of message.content) {
      addAll(primary.command, blockCommands(block, message.role));
      if (block.type === 'text') {
        const found = byKind(block.text);
        if (isObservation(message.role, block.text)) found.id = [];
        for (const kind of PRIORITY) addAll(primary[kind], found[kind]);
      } else if (block.type === 'tool_use') {
        primary.tool.add(block.name);
        for (const value of inputStrings(block.input)) {
          addAll(primary.error, errorLines(value));
          collectPaths(value, primary.path);
          collectUrls(value, primary.url);
          eachMatch(value, TICKET, (ticket) => primary.ticket.add(ticket));
          addAll(primary.id, extractIds(value));
        }
      } else if (block.type === 'tool_result') {
        const text = toolResultText(block);
        const errors = errorLines(text);
        if (block.is_error === true && errors.length === 0) {
          const firstLine = text
            .split('\n')
            .find((line) => line.trim().length > 0)
            ?.trim();
          if (firstLine) errors.push(clipErrorLine(firstLine));
        }
        addAll(primary.error, errors);
        collectUrls(text, primary.url);
        collectPaths(text, outputPaths);
      }
    }
  }
  const byKindLists = Object.fromEntries(PRIORITY.map((kind) => [kind, [...primary[kind]]])) as Record<IdentifierKind, string[]>;
  return { ordered: dedupe([...PRIORITY.flatMap((kind) => byKindLists[kind]), ...outputPaths]), byKind: byKindLists };
}

/** Every identifier of a chunk (uncapped), in rank order: what the gate checks. */
export function extractChunkIdentifiers(messages: readonly HistoryMessage[], max = Number.POSITIVE_INFINITY): string[] {
  return capIdentifiers(rankChunkIdentifiers(messages), max);
}

/** At most `max` in rank order, giving each kind a fair share first so one noisy kind cannot crowd out the rest. */
export function capIdentifiers(ranked: RankedIdentifiers, max: number): string[] {
  const { ordered, byKind: primary } = ranked;
  if (ordered.length <= max) return ordered;
  const quota = Math.ceil(max / 4);
  const chosen = new Set<string>();
  for (const kind of PRIORITY) {
    for (const value of dedupe(primary[kind]).slice(0, quota)) if (chosen.size < max) chosen.add(value);
  }
  for (const value of ordered) if (chosen.size < max) chosen.add(value);
  return ordered.filter((value) => chosen.has(value));
}

export function normalizeSpace(text: string): string {
  return text.replace(/\s+/g, ' ');
}

/** The identifiers a summary does not contain verbatim (whitespace differences ignored). */
export function findMissingIdentifiers(identifiers: readonly string[], summary: string): string[] {
  const haystack = normalizeSpace(summary);
  return identifiers.filter((id) => !haystack.includes(normalizeSpace(id).trim()));
}

/** Retention reported in the job result (SPEC §5.6a): how many identifiers the summary kept. */
export function identifierRetention(identifiers: readonly string[], summary: string): { found: number; total: number } {
  return { found: identifiers.length - findMissingIdentifiers(identifiers, summary).length, total: identifiers.length };
}

export const IDENTIFIERS_HEADING = 'Identifiers (verbatim from the archived messages):';

const listItem = (id: string): string => `- ${normalizeSpace(id).trim()}`;

/** The identifiers, in order, whose list items fit in `maxChars` characters (one that does not fit is skipped). */
export function identifiersWithin(identifiers: readonly string[], maxChars: number): string[] {
  const out: string[] = [];
  let used = 0;
  for (const id of identifiers) {
    const chars = listItem(id).length + 1;
    if (used + chars > maxChars) continue;
    out.push(id);
    used += chars;
  }
  return out;
}

/**
 * A summary without the identifier lists the gate used to append (each heading and the `- `
 * lines under it): batches stored before the lists were dropped still carry them, and a
 * consolidation must not pay for them as input nor carry them into the clip-archive.
 */
export function withoutIdentifierLists(summary: string): string {
  const out: string[] = [];
  let inList = false;
  for (const line of summary.split('\n')) {
    if (line.trim() === IDENTIFIERS_HEADING) {
      inList = true;
      continue;
    }
    if (inList && line.startsWith('- ')) continue;
    inList = false;
    out.push(line);
  }
  return out.join('\n').trimEnd();
}
