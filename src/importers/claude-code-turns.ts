import { pushAll } from '../compaction/push-all.js';
import { type MessageLine, usageOf } from './claude-code-lines.js';
import { isRecord } from './json.js';

/** One kept line of a Claude Code session: its entry, cleaned content blocks and 1-based line number. */
export interface SessionLine {
  entry: MessageLine;
  blocks: unknown[];
  line: number;
}

/** What rebuilding the API messages changed, for the import stats. */
export interface TurnStats {
  /** a second tool_result for a call already answered (a provider rejects two answers to one call) */
  duplicateToolResults: number;
  /** calls with no result in the file that a later message follows, answered with an error result */
  synthesizedToolResults: number;
}

interface AssistantTurn {
  kind: 'assistant';
  blocks: unknown[];
  lines: number[];
  first: MessageLine;
  last: MessageLine;
  /** tool_use id → its result block and line, filled wherever the result sits in the file */
  results: Map<string, { block: unknown; line: number; entry: MessageLine }>;
}

interface UserTurn {
  kind: 'user';
  blocks: unknown[];
  lines: number[];
  first: MessageLine;
}

type Turn = AssistantTurn | UserTurn;

/** A message in Anthropic wire shape plus the source lines behind it. */
export interface RebuiltMessage {
  raw: Record<string, unknown>;
  lines: number[];
}

/** Text of the result given to a call the transcript never answered, so the history stays valid. */
export const MISSING_RESULT_TEXT = '[no result for this tool call is recorded in the transcript]';

/**
 * Rebuilds the API messages a Claude Code session sent. Claude Code writes every content
 * block of a reply on its own line, and the results of parallel calls as separate user
 * lines that may sit between the reply's lines, or after lines of a later reply. So every
 * line of one `message.id` joins the message its first line opened, whatever lies between,
 * and every tool result goes to the user message right after the reply that called it
 * (results in call order, before anything else the user said then): the order the provider
 * required. A result whose call is not (yet) in the file stays where it is; the build
 * step turns it into text.
 */
export function rebuildMessages(lines: readonly SessionLine[]): { messages: RebuiltMessage[]; stats: TurnStats } {
  const turns: Turn[] = [];
  const byMessageId = new Map<string, AssistantTurn>();
  const callers = new Map<string, AssistantTurn>();
  const stats: TurnStats = { duplicateToolResults: 0, synthesizedToolResults: 0 };
  for (const { entry, blocks, line } of lines) {
    if (entry.type === 'assistant') {
      const id = entry.message.id;
      const open = id === undefined ? undefined : byMessageId.get(id);
      const turn = open ?? newAssistantTurn(entry);
      if (!open) {
        turns.push(turn);
        if (id !== undefined) byMessageId.set(id, turn);
      }
      pushAll(turn.blocks, blocks);
      turn.lines.push(line);
      turn.last = entry;
      for (const id of toolUseIds(blocks)) callers.set(id, turn);
      continue;
    }
    const rest: unknown[] = [];
    for (const block of blocks) {
      const caller = isToolResult(block) ? callers.get(block.tool_use_id) : undefined;
      if (!isToolResult(block) || !caller) rest.push(block);
      else if (caller.results.has(block.tool_use_id)) stats.duplicateToolResults++;
      else caller.results.set(block.tool_use_id, { block, line, entry });
    }
    if (rest.length > 0) turns.push({ kind: 'user', blocks: rest, lines: [line], first: entry });
  }
  const messages: RebuiltMessage[] = [];
  turns.forEach((turn, index) => {
    if (turn.kind === 'user') {
      messages.push({ raw: rawMessage('user', turn.blocks, turn.first), lines: turn.lines });
      return;
    }
    messages.push({ raw: assistantMessage(turn), lines: turn.lines });
    const results = resultsMessage(turn, index === turns.length - 1, stats);
    if (results) messages.push(results);
  });
  return { messages, stats };
}

function newAssistantTurn(entry: MessageLine): AssistantTurn {
  return { kind: 'assistant', blocks: [], lines: [], first: entry, last: entry, results: new Map() };
}

/**
 * The user message answering a reply's calls, in call order; none after a last reply
 * whose calls are all still pending. A call with no result in the file gets an error result.
 */
function resultsMessage(turn: AssistantTurn, isLast: boolean, stats: TurnStats): RebuiltMessage | undefined {
  const calls = toolUseIds(turn.blocks);
  if (calls.length === 0 || (isLast && turn.results.size === 0)) return undefined;
  const blocks: unknown[] = [];
  const lines: number[] = [];
  let first: MessageLine | undefined;
  for (const id of calls) {
    const result = turn.results.get(id);
    if (result) {
      blocks.push(result.block);
      lines.push(result.line);
      first ??= result.entry;
    } else {
      // Once a message follows the call, the provider wants an answer to every call of the reply.
      blocks.push({ type: 'tool_result', tool_use_id: id, content: MISSING_RESULT_TEXT, is_error: true });
      stats.synthesizedToolResults++;
    }
  }
  lines.sort((a, b) => a - b);
  return { raw: rawMessage('user', blocks, first), lines };
}

function assistantMessage(turn: AssistantTurn): Record<string, unknown> {
  const raw = rawMessage('assistant', turn.blocks, turn.first);
  const metadata = raw.metadata as Record<string, unknown>;
  if (turn.first.message.model !== undefined) metadata.model = turn.first.message.model;
  // Streaming writes a usage snapshot on every line of a reply; the last one is final.
  const usage = usageOf(turn.last);
  return usage ? { ...raw, usage } : raw;
}

function rawMessage(role: 'user' | 'assistant', content: unknown[], first: MessageLine | undefined): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  if (first?.uuid !== undefined) metadata.uuid = first.uuid;
  if (first?.timestamp !== undefined) metadata.timestamp = first.timestamp;
  if (first?.isMeta === true) {
    metadata.isMeta = true;
    // Claude Code's own injections (skill bodies, hook context, command caveats): no request of the user
    if (role === 'user') metadata.meta = true;
  }
  if (first?.isCompactSummary === true) metadata.isCompactSummary = true;
  return { role, content, metadata };
}

function toolUseIds(blocks: readonly unknown[]): string[] {
  return blocks.flatMap((b) => (isRecord(b) && b.type === 'tool_use' && typeof b.id === 'string' ? [b.id] : []));
}

function isToolResult(block: unknown): block is { type: 'tool_result'; tool_use_id: string } {
  return isRecord(block) && block.type === 'tool_result' && typeof block.tool_use_id === 'string';
}
