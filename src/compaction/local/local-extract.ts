import { pushAll } from '../push-all.js';
import { TOOL_CALL_MARKER, TOOL_RESULT_MARKER } from '../render.js';
import { errorLines, extractPaths } from '../summarize/index.js';
import type { SummarizeMessage } from '../types.js';
import { toolFailure } from './local-failures.js';

/**
 * Reads a rendered chunk (the messages of a SummarizeRequest) back into the facts the local
 * summarizer reports: what the user asked, what the assistant said, each tool call with its
 * outcome, files, errors. The marker lines are those written by `render.ts`.
 */

export interface ToolCallFact {
  name: string;
  id: string;
  input: Record<string, unknown>;
  result: string | null;
  /** the result's own `is_error` */
  isError: boolean;
  /** why the call failed (its is_error, a failing test, a non-zero exit, a final error line), or null */
  failure: string | null;
}

export interface ChunkFacts {
  userTexts: string[];
  assistantTexts: string[];
  toolCalls: ToolCallFact[];
  /** path → what was done to it (read, edited, written, mentioned), first-seen order */
  files: Map<string, string>;
  urls: string[];
  errors: string[];
  /** latest todo list found in a tool input (`todos: [{content, status}]`) */
  todos: Array<{ content: string; status: string }>;
}

const PATH_KEYS = ['file_path', 'notebook_path', 'path', 'filename', 'file'];
const KEY_ARGS = ['file_path', 'notebook_path', 'command', 'pattern', 'url', 'query', 'path', 'description', 'prompt', 'skill'];
const ACTIONS: Record<string, string> = { Read: 'read', Edit: 'edited', MultiEdit: 'edited', Write: 'written', NotebookEdit: 'edited' };

function parseInput(line: string | undefined): Record<string, unknown> {
  if (line === undefined) return {};
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  } catch {
    return { value: line };
  }
}

interface Segment {
  kind: 'text' | 'call' | 'result';
  name: string;
  id: string;
  isError: boolean;
  lines: string[];
}

/** Splits a rendered message into text, tool-call and tool-result segments. */
export function segmentsOf(content: string): Segment[] {
  const segments: Segment[] = [];
  let current: Segment = { kind: 'text', name: '', id: '', isError: false, lines: [] };
  const lines = content.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] as string;
    const call = TOOL_CALL_MARKER.exec(line);
    const result = call ? null : TOOL_RESULT_MARKER.exec(line);
    if (!call && !result) {
      current.lines.push(line);
      continue;
    }
    segments.push(current);
    if (call) {
      // the JSON input is one line: JSON.stringify escapes newlines
      segments.push({ kind: 'call', name: call[1] ?? '', id: call[2] ?? '', isError: false, lines: [lines[i + 1] ?? '{}'] });
      i += 1;
      current = { kind: 'text', name: '', id: '', isError: false, lines: [] };
    } else if (result) {
      current = { kind: 'result', name: result[1] ?? '', id: result[2] ?? '', isError: result[3] !== undefined, lines: [] };
    }
  }
  segments.push(current);
  return segments.filter((s) => s.kind !== 'text' || s.lines.join('\n').trim().length > 0);
}

function noteFile(files: Map<string, string>, path: string, action: string): void {
  const previous = files.get(path);
  // an edit or write says more than a read or a mention
  if (previous === undefined || previous === 'mentioned' || (previous === 'read' && action !== 'mentioned')) files.set(path, action);
}

function noteCallFiles(facts: ChunkFacts, call: ToolCallFact): void {
  const action = ACTIONS[call.name] ?? 'mentioned';
  for (const key of PATH_KEYS) {
    const value = call.input[key];
    if (typeof value === 'string' && value.length > 1) noteFile(facts.files, value, action);
  }
  for (const [key, value] of Object.entries(call.input)) {
    if (typeof value !== 'string' || PATH_KEYS.includes(key) || key === 'content' || key.endsWith('_string')) continue;
    for (const path of extractPaths(value)) noteFile(facts.files, path, 'mentioned');
  }
  const todos = call.input['todos'];
  if (Array.isArray(todos)) {
    facts.todos = todos
      .filter((t): t is Record<string, unknown> => typeof t === 'object' && t !== null)
      .map((t) => ({ content: String(t['content'] ?? ''), status: String(t['status'] ?? '') }))
      .filter((t) => t.content.length > 0);
  }
}

function noteText(facts: ChunkFacts, role: SummarizeMessage['role'], text: string): void {
  if (role === 'user') facts.userTexts.push(text);
  else if (role === 'assistant') facts.assistantTexts.push(text);
  for (const path of extractPaths(text)) noteFile(facts.files, path, 'mentioned');
  for (const url of text.match(/\bhttps?:\/\/[^\s<>"'`)\]}\\]+/g) ?? []) facts.urls.push(url.replace(/[.,;:!?]+$/, ''));
  pushAll(facts.errors, errorLines(text));
}

function noteResult(facts: ChunkFacts, calls: Map<string, ToolCallFact>, segment: Segment): void {
  const output = segment.lines.join('\n').trim();
  const call = calls.get(segment.id);
  const failure = toolFailure(output, segment.isError);
  if (call) {
    call.result = output;
    call.isError = segment.isError;
    call.failure = failure;
  }
  const errors = errorLines(output);
  // The line that says the call failed is an error even when it reads like none ("not ok 3 …").
  if (failure !== null && !errors.includes(failure)) errors.push(failure);
  pushAll(facts.errors, errors);
}

/** Collects the facts of a rendered chunk (the conversation messages only). */
export function extractFacts(messages: readonly SummarizeMessage[]): ChunkFacts {
  const facts: ChunkFacts = { userTexts: [], assistantTexts: [], toolCalls: [], files: new Map(), urls: [], errors: [], todos: [] };
  const calls = new Map<string, ToolCallFact>();
  for (const message of messages) {
    for (const segment of segmentsOf(message.content)) {
      if (segment.kind === 'text') noteText(facts, message.role, segment.lines.join('\n').trim());
      else if (segment.kind === 'call') {
        const call: ToolCallFact = {
          name: segment.name,
          id: segment.id,
          input: parseInput(segment.lines[0]),
          result: null,
          isError: false,
          failure: null,
        };
        calls.set(call.id, call);
        facts.toolCalls.push(call);
        noteCallFiles(facts, call);
      } else noteResult(facts, calls, segment);
    }
  }
  facts.errors = [...new Set(facts.errors)];
  facts.urls = [...new Set(facts.urls)];
  return facts;
}

/** The argument that best describes a call: its file, command, pattern, URL or query. */
export function keyArgument(call: ToolCallFact): string {
  for (const key of KEY_ARGS) {
    const value = call.input[key];
    if (typeof value === 'string' && value.trim().length > 0) return value.trim().replace(/\s+/g, ' ');
  }
  const first = Object.values(call.input).find((v) => typeof v === 'string');
  return typeof first === 'string' ? first.replace(/\s+/g, ' ') : '';
}

/** Sentences of a text (and its lines), trimmed, without very short fragments. */
export function sentences(text: string): string[] {
  return text
    .split(/\n+|(?<=[.!?])\s+(?=[A-Z`"([])/)
    .map((s) => s.trim().replace(/^[-*•]\s+/, ''))
    .filter((s) => s.length >= 8);
}
