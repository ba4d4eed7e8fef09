import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { listRealTranscripts, loadRealTranscript, type RealTranscript } from '../../../harness/transcripts.js';
import type { Block, NormalizedMessage, ToolResultBlock } from '../../../src/compaction/types.js';
import type { ImportOptions } from '../../../src/importers/index.js';

/**
 * A tool call in an imported history is the call the model made: for every shared
 * transcript, the calls and results are read straight from the file (independently of the
 * importers) and compared with the imported history — names, arguments, ids and the result
 * each call got back.
 */

interface Call {
  id: string;
  name: string;
  input: unknown;
}
interface Result {
  content: string;
  isError: boolean;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const importedCalls = (messages: readonly NormalizedMessage[]): Call[] =>
  messages.flatMap((m) => m.content.flatMap((b): Call[] => (b.type === 'tool_use' ? [{ id: b.id, name: b.name, input: b.input }] : [])));

function importedResults(messages: readonly NormalizedMessage[]): Map<string, Result> {
  const out = new Map<string, Result>();
  for (const block of messages.flatMap((m) => m.content)) {
    if (block.type === 'tool_result') out.set(block.tool_use_id, { content: resultText(block.content), isError: block.is_error === true });
  }
  return out;
}

/** A result's text as the model read it: a string, or its parts (images as a marker). */
function resultText(content: ToolResultBlock['content'] | unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: unknown) => (isObject(part) && part.type === 'text' ? String(part.text) : '[image]')).join('\n');
}

// ---- Claude Code: the tool_use blocks of assistant lines, the tool_result blocks of user lines

function claudeCodeRecord(file: string): { calls: Map<string, Call>; results: Map<string, Result>; duplicateIds: string[] } {
  const calls = new Map<string, Call>();
  const results = new Map<string, Result>();
  const duplicateIds: string[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const entry = JSON.parse(line) as Json;
    const message = entry.message;
    if (!isObject(message) || !Array.isArray(message.content)) continue;
    for (const block of message.content as unknown[]) {
      if (!isObject(block)) continue;
      if (entry.type === 'assistant' && block.type === 'tool_use') {
        if (calls.has(String(block.id))) duplicateIds.push(String(block.id));
        calls.set(String(block.id), { id: String(block.id), name: String(block.name), input: block.input });
      } else if (entry.type === 'user' && block.type === 'tool_result' && !results.has(String(block.tool_use_id))) {
        results.set(String(block.tool_use_id), { content: resultText(block.content ?? ''), isError: block.is_error === true });
      }
    }
  }
  return { calls, results, duplicateIds };
}

function expectClaudeCode(transcript: RealTranscript, options: ImportOptions, whole: boolean): number {
  const recorded = claudeCodeRecord(transcript.path);
  expect(recorded.duplicateIds).toEqual([]);
  const [conversation] = loadRealTranscript(transcript.path, { format: 'claude-code', ...options }).conversations;
  const calls = importedCalls(conversation!.messages);
  for (const call of calls) expect(call, call.id).toEqual(recorded.calls.get(call.id));
  if (whole) expect(calls.map((c) => c.id).sort()).toEqual([...recorded.calls.keys()].sort());
  for (const [id, result] of importedResults(conversation!.messages)) expect(result, id).toEqual(recorded.results.get(id));
  return calls.length;
}

// ---- τ-bench: OpenAI tool_calls of assistant messages, each answered by the next tool message with its id

function tauRecord(traj: Json[]): Array<Call & { result: Result | undefined }> {
  const out: Array<Call & { result: Result | undefined }> = [];
  traj.forEach((message, index) => {
    for (const call of (message.tool_calls as Json[] | undefined) ?? []) {
      const fn = call.function as { name: string; arguments: string };
      const answer = traj.slice(index + 1).find((m) => m.role === 'tool' && m.tool_call_id === call.id);
      const result = answer ? { content: String(answer.content ?? ''), isError: false } : undefined;
      out.push({ id: String(call.id), name: fn.name, input: JSON.parse(fn.arguments) as unknown, result });
    }
  });
  return out;
}

// ---- mini-swe-agent: no structured calls; the action is in the text the model wrote

function modelTextsOf(messages: Json[]): Array<{ text: string; toolCalls: unknown }> {
  return messages
    .filter((m) => m.role === 'assistant')
    .map((m) => {
      const reply = ((m.extra as Json).response as { choices: Array<{ message: Json }> }).choices[0]!.message;
      return { text: String(reply.content), toolCalls: reply.tool_calls };
    });
}

const texts = (m: NormalizedMessage) => m.content.flatMap((b: Block) => (b.type === 'text' ? [b.text] : [])).join('\n');

describe('shared transcripts: the imported tool calls are the model’s recorded calls', () => {
  const transcripts = listRealTranscripts();
  const byFormat = (format: string) => transcripts.filter((t) => t.format === format);

  it('covers the whole shared set', () => {
    expect(byFormat('claude-code').length + byFormat('tau-bench').length + byFormat('mini-swe-agent').length).toBe(transcripts.length);
  });

  it.each(byFormat('claude-code'))('$name: same calls (ids, names, inputs) and each call’s own result', (transcript) => {
    // up to the compact boundary, then the whole file with subagent turns: nothing renamed, dropped or made up
    expectClaudeCode(transcript, {}, false);
    const all = expectClaudeCode(transcript, { compactBoundary: 'include', includeSidechains: true }, true);
    const [whole] = loadRealTranscript(transcript.path, {
      format: 'claude-code',
      compactBoundary: 'include',
      includeSidechains: true,
    }).conversations;
    expect(whole!.stats).toMatchObject({ renamedToolUseIds: 0, synthesizedToolResults: 0, orphanedToolResults: 0 });
    expect(all).toBe(claudeCodeRecord(transcript.path).calls.size);
  });

  it.each(byFormat('tau-bench'))('$name: every trajectory’s calls in order, with the answer each got', (transcript) => {
    const runs = JSON.parse(readFileSync(transcript.path, 'utf8')) as Array<{ traj: Json[] }>;
    const conversations = loadRealTranscript(transcript.path).conversations;
    expect(conversations).toHaveLength(runs.length);
    let total = 0;
    runs.forEach((run, index) => {
      const recorded = tauRecord(run.traj);
      const conversation = conversations[index]!;
      const calls = importedCalls(conversation.messages);
      const results = importedResults(conversation.messages);
      // ids repeated by the recorded runs are renamed; names, arguments and order are the model's
      expect(
        calls.map(({ name, input }) => ({ name, input })),
        conversation.id,
      ).toEqual(recorded.map(({ name, input }) => ({ name, input })));
      calls.forEach((call, k) => expect(results.get(call.id), `${conversation.id} call ${k}`).toEqual(recorded[k]!.result));
      total += calls.length;
    });
    expect(total).toBe(1164);
  });

  it.each(byFormat('mini-swe-agent'))('$name: no structured calls, each reply verbatim as the model wrote it', (transcript) => {
    const trajectory = JSON.parse(readFileSync(transcript.path, 'utf8')) as { messages: Json[] };
    const recorded = modelTextsOf(trajectory.messages);
    expect(recorded.every((r) => r.toolCalls === undefined || r.toolCalls === null)).toBe(true);
    const [conversation] = loadRealTranscript(transcript.path).conversations;
    expect(importedCalls(conversation!.messages)).toEqual([]);
    expect(conversation!.messages.filter((m) => m.role === 'assistant').map(texts)).toEqual(recorded.map((r) => r.text));
  });
});

describe('shared Claude Code sessions: meta turns are flagged, typed requests are not', () => {
  const WRAPPER =
    /^\s*<(task-notification|command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat|system-reminder)>/;
  const sessions = listRealTranscripts().filter((t) => t.format === 'claude-code');

  it('flags exactly the user turns Claude Code marked isMeta or wrote as a wrapper or an interruption notice', () => {
    const flagged: string[] = [];
    let requests = 0;
    for (const transcript of sessions) {
      const isMetaLine = new Map<string, boolean>();
      for (const line of readFileSync(transcript.path, 'utf8').split('\n')) {
        if (line.trim() === '') continue;
        const entry = JSON.parse(line) as Json;
        if (typeof entry.uuid === 'string') isMetaLine.set(entry.uuid, entry.isMeta === true);
      }
      const [conversation] = loadRealTranscript(transcript.path, {
        format: 'claude-code',
        compactBoundary: 'include',
        includeSidechains: true,
      }).conversations;
      for (const message of conversation!.messages.filter((m) => m.role === 'user')) {
        const typed = message.content.flatMap((b) => (b.type === 'text' && b.text.trim() !== '' ? [b.text] : []));
        const expected =
          isMetaLine.get(String(message.metadata?.['uuid'])) === true ||
          (typed.length > 0 && typed.every((t) => WRAPPER.test(t) || /^\[Request interrupted by user( for tool use)?\]$/.test(t.trim())));
        expect(message.metadata?.['meta'] === true, `${transcript.name}: ${typed[0]?.slice(0, 60)}`).toBe(expected);
        if (expected) flagged.push(typed[0]?.slice(0, 30) ?? '');
        else if (typed.length > 0) requests++;
      }
    }
    expect(flagged.filter((t) => t.startsWith('<task-notification>'))).toHaveLength(4);
    expect(flagged.filter((t) => t.startsWith('<command-'))).toHaveLength(3);
    expect(flagged.filter((t) => t.startsWith('[Request interrupted')).length).toBeGreaterThan(0);
    expect(requests).toBeGreaterThan(20);
  });
});
