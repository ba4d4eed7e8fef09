import { markMetaTurn } from '../compaction/meta-turns.js';
import { type FieldIssue, type MessageFormat, normalizeMessages } from '../compaction/normalize.js';
import { toolResultText } from '../compaction/render.js';
import type { Block, NormalizedMessage } from '../compaction/types.js';
import { TranscriptImportError } from './errors.js';
import type { ImportedConversation, ImportStats } from './types.js';

export interface BuildInput {
  id: string;
  /** Messages in the wire format named by `format`, in conversation order. */
  raw: unknown[];
  format: MessageFormat;
  /** 1-based input lines behind each raw message, to name them in errors (JSONL sources). */
  sourceLines?: number[][];
  /** Where each raw message sits in the source (e.g. "messages.3"), to name it in errors (JSON sources). */
  names?: string[];
  /** Prefix of error messages naming the part of a multi-conversation file (e.g. "trajectory 3"). */
  label?: string;
  droppedLines: number;
  metadata: Record<string, unknown>;
  /** The model the transcript ran on, when it says. */
  model?: string | undefined;
  /** Counts of repairs the importer made before building (Claude Code's rebuilt messages). */
  extraStats?: Partial<Pick<ImportStats, 'duplicateToolResults' | 'synthesizedToolResults'>>;
}

/**
 * Runs the importer's messages through ingestion normalization (the same validation the
 * API applies), drops messages left without content, flags meta turns (as the API does at
 * append: meta-turns.ts), and makes the tool pairing valid:
 * a tool_result whose tool_use never appeared becomes text, because compactd rejects
 * orphaned results (SPEC §4), and a reused tool id is renamed. Counts what it kept and changed.
 */
export function buildConversation(input: BuildInput): ImportedConversation {
  const normalized = normalizeMessages(input.raw, input.format);
  if (!normalized.ok) throw invalid(input, normalized.issues);
  let droppedLines = input.droppedLines;
  const messages: NormalizedMessage[] = [];
  normalized.messages.forEach((message, index) => {
    // a harness wrapper (task notification, slash command, reminder) is kept, flagged as a meta turn
    if (message.content.length > 0) messages.push(markMetaTurn(message));
    else droppedLines += input.sourceLines?.[index]?.length ?? 1;
  });
  const pairing = repairPairing(messages);
  const stats: ImportStats = {
    messages: pairing.messages.length,
    toolPairs: pairing.toolPairs,
    unmatchedToolUses: pairing.unmatchedToolUses,
    droppedLines,
    orphanedToolResults: pairing.orphanedToolResults,
    renamedToolUseIds: pairing.renamedToolUseIds,
    duplicateToolResults: input.extraStats?.duplicateToolResults ?? 0,
    synthesizedToolResults: input.extraStats?.synthesizedToolResults ?? 0,
  };
  const conversation: ImportedConversation = { id: input.id, messages: pairing.messages, stats, metadata: input.metadata };
  return input.model === undefined ? conversation : { ...conversation, model: input.model };
}

function invalid(input: BuildInput, issues: FieldIssue[]): TranscriptImportError {
  const first = issues[0];
  const [, indexText, ...rest] = (first?.field ?? 'messages.0').split('.');
  const index = Number(indexText);
  const line = input.sourceLines?.[index]?.[0];
  const location = line !== undefined ? `line ${line}` : (input.names?.[index] ?? `messages.${index}`);
  const field = rest.length > 0 ? ` ${rest.join('.')}:` : '';
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more issues)` : '';
  const prefix = input.label === undefined ? '' : `${input.label}: `;
  const message = `${prefix}${location}:${field} ${first?.message ?? 'invalid'}${more}`;
  return new TranscriptImportError('TRANSCRIPT_INVALID', message, line === undefined ? { details: issues } : { line, details: issues });
}

interface Pairing {
  messages: NormalizedMessage[];
  toolPairs: number;
  unmatchedToolUses: number;
  orphanedToolResults: number;
  renamedToolUseIds: number;
}

/**
 * Tool ids must be unique in a conversation (the Messages API rejects a repeated tool_use
 * id, and compactd's units pair calls with results by id), yet real logs reuse them:
 * τ-bench's recorded GPT-4o runs repeat a call id in 49 of 200 trajectories. A repeated
 * id is renamed, and each result answers the oldest open call with its id.
 */
function repairPairing(messages: NormalizedMessage[]): Pairing {
  const allIds = new Set(messages.flatMap((m) => m.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []))));
  const seen = new Set<string>();
  const open = new Map<string, string[]>(); // original id → aliases still waiting for a result
  const answered = new Set<string>();
  let orphanedToolResults = 0;
  let renamedToolUseIds = 0;
  let opened = 0;
  const out = messages.map((message) => {
    let changed = false;
    const content = message.content.map((block): Block => {
      if (block.type === 'tool_use') {
        opened++;
        const alias = seen.has(block.id) ? freshId(block.id, allIds) : block.id;
        seen.add(block.id);
        open.set(block.id, [...(open.get(block.id) ?? []), alias]);
        if (alias === block.id) return block;
        renamedToolUseIds++;
        changed = true;
        return { ...block, id: alias };
      }
      if (block.type !== 'tool_result') return block;
      const alias = open.get(block.tool_use_id)?.shift();
      if (alias !== undefined) {
        answered.add(alias);
        if (alias === block.tool_use_id) return block;
        changed = true;
        return { ...block, tool_use_id: alias };
      }
      // A second result for an answered call stays as it is; one for a call never made becomes text.
      if (seen.has(block.tool_use_id)) return block;
      orphanedToolResults++;
      changed = true;
      return {
        type: 'text',
        text: `[result of tool call ${block.tool_use_id}, whose call is not in this transcript]\n${resultText(block.content)}`,
      };
    });
    if (!changed) return message;
    // A tool-role message left with text only reads as what it is: input to the model.
    const role = message.role === 'tool' && !content.some((b) => b.type === 'tool_result') ? 'user' : message.role;
    return { ...message, role, content };
  });
  return { messages: out, toolPairs: answered.size, unmatchedToolUses: opened - answered.size, orphanedToolResults, renamedToolUseIds };
}

function freshId(id: string, taken: Set<string>): string {
  let n = 2;
  while (taken.has(`${id}_${n}`)) n++;
  const alias = `${id}_${n}`;
  taken.add(alias);
  return alias;
}

function resultText(content: Extract<Block, { type: 'tool_result' }>['content']): string {
  // an image in it is named by its reference (compaction/images.ts), not dropped to "[image]"
  return toolResultText({ type: 'tool_result', tool_use_id: '', content });
}
