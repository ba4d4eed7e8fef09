import { commandIdentifier, extractCommands, extractIds, isObservation } from '../src/compaction/identifier-sources.js';
import { toolResultText } from '../src/compaction/render.js';
import {
  clipErrorLine,
  errorLines,
  extractChunkIdentifiers,
  extractPaths,
  findMissingIdentifiers,
  inputStrings,
  withoutIdentifierLists,
} from '../src/compaction/summarize/identifiers.js';
import type { Block, HistoryMessage, Role } from '../src/compaction/types.js';

/**
 * Identifier metrics of the summary fidelity eval. The identifiers of a span are the
 * ones compactd's own gate looks for (`extractChunkIdentifiers`, uncapped), plus ids it has
 * no pattern for and the shell commands the agent ran; an identifier is retained when the context after compaction
 * contains it verbatim, whitespace differences aside (the gate's own test).
 */

export type IdentifierKind = 'error' | 'path' | 'output-path' | 'url' | 'ticket' | 'id' | 'tool' | 'command' | 'quoted' | 'number';

export const IDENTIFIER_KINDS: readonly IdentifierKind[] = [
  'error',
  'path',
  'output-path',
  'url',
  'ticket',
  'id',
  'tool',
  'command',
  'quoted',
  'number',
];

export interface SpanIdentifier {
  value: string;
  kind: IdentifierKind;
}

/** The slice of a message the metrics read: stored, imported and active messages all fit. */
export interface EvalMessage {
  role: Role;
  content: Block[];
  kind?: string;
  metadata?: Record<string, unknown>;
}

const URL_START = /^https?:\/\//;
const TICKET = /^(?:[A-Z][A-Z0-9]{1,9}-\d{1,6}|#\d{2,7})$/;
const NUMBER_START = /^\d/;

function asHistory(messages: readonly EvalMessage[]): HistoryMessage[] {
  return messages.map((m, seq) => ({
    seq,
    role: m.role,
    kind: 'message',
    content: m.content,
    tokens: 0,
    toolUseIds: [],
    toolResultIds: [],
  }));
}

// the gate's own extractors: the eval measures what the service promises to keep
export { commandIdentifier, extractCommands, extractIds };

/** Ids said by the user or the agent, or passed to a tool; tool outputs are data the agent read, not cited. */
function spokenIds(messages: readonly EvalMessage[]): string[] {
  const out: string[] = [];
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === 'text' && !isObservation(message.role, block.text)) out.push(...extractIds(block.text));
      else if (block.type === 'tool_use') for (const value of inputStrings(block.input)) out.push(...extractIds(value));
    }
  }
  return out;
}

/** Where each identifier came from, for the per-kind breakdown (the core's extractor returns plain strings). */
function kindSources(messages: readonly EvalMessage[]) {
  const errors = new Set<string>();
  const primaryPaths = new Set<string>();
  const tools = new Set<string>();
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === 'text') {
        errorLines(block.text).forEach((e) => errors.add(e));
        extractPaths(block.text).forEach((p) => primaryPaths.add(p));
      } else if (block.type === 'tool_use') {
        tools.add(block.name);
        for (const value of inputStrings(block.input)) {
          errorLines(value).forEach((e) => errors.add(e));
          extractPaths(value).forEach((p) => primaryPaths.add(p));
        }
      } else if (block.type === 'tool_result') {
        const text = toolResultText(block);
        const found = errorLines(text);
        found.forEach((e) => errors.add(e));
        const first = text
          .split('\n')
          .find((line) => line.trim().length > 0)
          ?.trim();
        if (block.is_error === true && found.length === 0 && first) errors.add(clipErrorLine(first));
      }
    }
  }
  return { errors, primaryPaths, tools, ids: new Set(spokenIds(messages)), commands: new Set(extractCommands(messages)) };
}

function classify(value: string, sources: ReturnType<typeof kindSources>, outputPaths: ReadonlySet<string>): IdentifierKind {
  if (sources.errors.has(value)) return 'error';
  if (sources.primaryPaths.has(value)) return 'path';
  if (URL_START.test(value)) return 'url';
  if (TICKET.test(value)) return 'ticket';
  if (sources.commands.has(value)) return 'command';
  if (sources.ids.has(value)) return 'id';
  if (sources.tools.has(value)) return 'tool';
  if (outputPaths.has(value)) return 'output-path';
  return NUMBER_START.test(value) ? 'number' : 'quoted';
}

/**
 * Every identifier of a span, with its kind: the gate's extraction without its per-chunk
 * cap, then the ids it has no pattern for, then the commands. System messages are left out
 * by the caller (never compacted).
 */
export function spanIdentifiers(messages: readonly EvalMessage[]): SpanIdentifier[] {
  const values = extractChunkIdentifiers(asHistory(messages), Number.MAX_SAFE_INTEGER);
  const sources = kindSources(messages);
  const outputPaths = new Set<string>();
  for (const message of messages) {
    for (const block of message.content)
      if (block.type === 'tool_result') extractPaths(toolResultText(block)).forEach((p) => outputPaths.add(p));
  }
  const out: SpanIdentifier[] = values.map((value) => ({ value, kind: classify(value, sources, outputPaths) }));
  const seen = new Set(values);
  const add = (value: string, kind: IdentifierKind) => {
    if (!seen.has(value)) out.push({ value, kind });
    seen.add(value);
  };
  for (const id of spokenIds(messages)) add(id, 'id');
  for (const command of extractCommands(messages)) add(command, 'command');
  return out;
}

/** String values of a tool input at any depth (file contents included: kept messages carry them verbatim). */
function allStrings(value: unknown, depth = 0): string[] {
  if (typeof value === 'string') return [value];
  if (depth > 8 || typeof value !== 'object' || value === null) return [];
  return (Array.isArray(value) ? value : Object.values(value)).flatMap((v) => allStrings(v, depth + 1));
}

function blockText(block: Block): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'tool_use':
      return [block.name, ...allStrings(block.input)].join('\n');
    case 'tool_result':
      return toolResultText(block);
    case 'image':
      return '';
  }
}

/** The text an agent would read in a context: text, tool names and input values, tool outputs. */
export function contextText(messages: readonly Pick<EvalMessage, 'content'>[]): string {
  return messages.map((m) => m.content.map(blockText).join('\n')).join('\n\n');
}

/**
 * A context without the gate's appended identifier lists: each `Identifiers (verbatim…)`
 * heading and the `- ` lines under it are dropped. What remains is what the summarizer
 * wrote on its own ("before the gate").
 */
export const stripIdentifierLists = withoutIdentifierLists;

export interface Retention {
  found: number;
  total: number;
  /** found / total; 1 when there is nothing to retain */
  ratio: number;
  byKind: Partial<Record<IdentifierKind, { found: number; total: number }>>;
  missing: SpanIdentifier[];
}

/** Share of the identifiers the context contains verbatim (whitespace-insensitive, case-sensitive). */
export function identifierRetention(identifiers: readonly SpanIdentifier[], context: string): Retention {
  const missingValues = new Set(
    findMissingIdentifiers(
      identifiers.map((i) => i.value),
      context,
    ),
  );
  const byKind: Retention['byKind'] = {};
  const missing: SpanIdentifier[] = [];
  for (const id of identifiers) {
    const entry = (byKind[id.kind] ??= { found: 0, total: 0 });
    entry.total += 1;
    if (missingValues.has(id.value)) missing.push(id);
    else entry.found += 1;
  }
  const found = identifiers.length - missing.length;
  return { found, total: identifiers.length, ratio: identifiers.length === 0 ? 1 : found / identifiers.length, byKind, missing };
}
