import { describe, imageFacts } from '../images.js';
import type { Block, HistoryMessage, ImageBlock } from '../types.js';
import { LedgerAccumulator } from './accumulate.js';
import { capLine, commandLine } from './command-line.js';
import type { CallEffects, FileEffect } from './effects.js';
import { errorLine } from './error-line.js';
import { callEffects } from './extractors/index.js';
import { extractInstructions } from './instructions.js';
import { isDeclined, readResult, type ResultReading } from './result.js';
import type { Ledger, LedgerFile, TargetKind } from './schema.js';
import { pairToolCalls, type ToolCall } from './tool-calls.js';

/**
 * The state ledger of a span (SPEC §5.6b), computed from its messages alone: every tool call
 * paired with its result and read by the extractor of its agent's conventions, every user
 * turn read for requests and constraints. Pure and deterministic; a span split anywhere
 * between tool exchanges gives two ledgers whose merge is this one.
 */

const MAX_CALL_TARGET_CHARS = 120;

function fileEntry(effect: FileEffect, seq: number): LedgerFile {
  const entry: LedgerFile = { path: effect.path, actions: { [effect.action]: 1 }, lastSeq: seq };
  if (effect.action !== 'read') {
    entry.changedSeq = seq;
    entry.lastChange = effect.action;
  }
  if (effect.gist !== undefined) entry.gist = effect.gist;
  if (effect.movedTo !== undefined) entry.movedTo = effect.movedTo;
  return entry;
}

/** What a call that is neither a command nor a file tool acts on: its first short string argument. */
function callTarget(input: Record<string, unknown>): string {
  const value = Object.values(input).find(
    (v): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_CALL_TARGET_CHARS && !v.includes('\n'),
  );
  return value ?? '';
}

function targetOf(call: ToolCall, found: CallEffects): { targetKind: Exclude<TargetKind, 'command'>; target: string } {
  const path = found.files[0]?.path;
  return path === undefined ? { targetKind: 'call', target: callTarget(call.input) } : { targetKind: 'path', target: path };
}

/** Programs whose exit status 1 answers a question (no match, files differ, test false) rather than reports a failure. */
const QUERIES = /^(?:grep|egrep|fgrep|rg|ag|ack|diff|cmp|test|\[|which|command -v)\b/;

function quietQuery(line: string | null, reading: ResultReading): ResultReading {
  const last = line?.split(/\s*\|\s*/).pop() ?? '';
  const asked = line !== null && (QUERIES.test(line) || QUERIES.test(last));
  return asked && reading.exitCode === 1 && reading.outcome === 'failed' ? { ...reading, outcome: 'ok' } : reading;
}

/** The tools that start a sub-agent (Claude Code's `Task`, later named `Agent`). */
const SUBAGENT_TOOLS: ReadonlySet<string> = new Set(['Task', 'Agent']);
const MAX_AGENT_TEXT_CHARS = 200;

/** The first line of a sub-agent's answer that says something (not a heading rule or a fence). */
function firstLine(text: string): string | undefined {
  const line = text
    .split('\n')
    .map((l) => l.replace(/^[#>*\-\s]+/, '').trim())
    .find((l) => l.length > 0 && !/^[`=_-]+$/.test(l));
  return line === undefined ? undefined : capLine(line, MAX_AGENT_TEXT_CHARS);
}

function addAgent(acc: LedgerAccumulator, call: ToolCall): void {
  const input = call.input;
  const described =
    typeof input['description'] === 'string' ? input['description'] : typeof input['prompt'] === 'string' ? input['prompt'] : '';
  const task = firstLine(described);
  if (task === undefined) return;
  const result = call.result === null ? undefined : firstLine(call.result.text);
  acc.addAgent({
    task,
    ...(typeof input['subagent_type'] === 'string' &&
      input['subagent_type'] !== '' && { type: capLine(input['subagent_type'], MAX_AGENT_TEXT_CHARS) }),
    status: call.result === null ? 'running' : call.result.isError ? 'failed' : 'done',
    ...(result !== undefined && { result }),
    seq: call.seq,
  });
}

function addCall(acc: LedgerAccumulator, call: ToolCall): void {
  if (SUBAGENT_TOOLS.has(call.tool)) addAgent(acc, call);
  const found = callEffects(call);
  const declined = call.result !== null && isDeclined(call.result.text);
  if (declined) return; // the user turned it down: nothing ran
  const line = found.command === null ? null : commandLine(found.command);
  const reading: ResultReading = quietQuery(line, readResult(call.result, line !== null));
  const seq = call.seq;

  if (!found.filesNeedSuccess || reading.outcome === 'ok') {
    for (const effect of found.files) acc.addFile(fileEntry(effect, seq));
  }
  if (found.tasks !== null && reading.outcome !== 'failed') acc.setTasks({ items: found.tasks, seq });

  if (line !== null) {
    acc.addCommand({
      line,
      outcome: reading.outcome,
      count: 1,
      lastSeq: seq,
      ...(call.at > 0 && { lastAt: call.at }),
      ...(reading.exitCode !== undefined && { exitCode: reading.exitCode }),
      ...(reading.outcome === 'ok' && { lastOkSeq: seq }),
    });
  }
  const target = line !== null ? { targetKind: 'command' as const, target: line } : targetOf(call, found);
  if (reading.outcome === 'failed') {
    const error = errorLine(reading.body);
    if (error !== null) acc.addError({ line: error, tool: call.tool, ...target, seq, resolved: false });
  } else if (reading.outcome === 'ok' && target.targetKind !== 'command') {
    acc.addOkCall({ tool: call.tool, targetKind: target.targetKind, target: target.target, seq });
  }
}

/** The images of a message's blocks, with who sent each (an image inside a tool result is the tool's). */
function imagesOf(content: readonly Block[]): Array<{ image: ImageBlock; inResult: boolean }> {
  return content.flatMap((block): Array<{ image: ImageBlock; inResult: boolean }> => {
    if (block.type === 'image') return [{ image: block, inResult: false }];
    if (block.type === 'tool_result' && typeof block.content !== 'string')
      return block.content.flatMap((part) => (part.type === 'image' ? [{ image: part, inResult: true }] : []));
    return [];
  });
}

function addImages(acc: LedgerAccumulator, message: HistoryMessage): void {
  for (const { image, inResult } of imagesOf(message.content)) {
    const facts = imageFacts(image);
    const from = inResult || message.role === 'tool' ? 'tool' : message.role === 'assistant' ? 'assistant' : 'user';
    acc.addImage({ ref: facts.ref, description: describe(facts), from, seq: message.seq });
  }
}

export function extractLedger(messages: readonly HistoryMessage[]): Ledger {
  const acc = new LedgerAccumulator();
  for (const call of pairToolCalls(messages)) addCall(acc, call);
  for (const message of messages) addImages(acc, message);
  const { constraints, requests } = extractInstructions(messages);
  for (const sentence of constraints) acc.addSentence('constraints', sentence);
  for (const sentence of requests) acc.addSentence('requests', sentence);
  return acc.ledger();
}
