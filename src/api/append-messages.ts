import { markMetaTurn } from '../compaction/meta-turns.js';
import { type MessageFormat, normalizeMessages, toolIdsOf } from '../compaction/normalize.js';
import { blockText, countMessageTokens } from '../compaction/tokens.js';
import type { CountTokens, NormalizedMessage } from '../compaction/types.js';
import type { Tx } from '../db/client.js';
import { withConversationLock } from '../db/locks.js';
import { type ConversationRow, recordAppend } from '../db/repos/conversations.js';
import { insertReservedMessages, type NewMessage, type ToolPairingState, toolPairingState } from '../db/repos/messages.js';
import { AppError } from '../lib/errors.js';

export interface AppendInput {
  format: MessageFormat;
  messages: unknown[];
  usage?: { inputTokens: number } | undefined;
}

export interface PreparedAppend {
  rows: NewMessage[];
  reportedInputTokens: number | undefined;
}

/**
 * CPU work of an append, done before any lock is taken: size limits, normalization
 * and token counts. Throws a 4xx AppError naming the field.
 */
export function prepareAppend(input: AppendInput, deps: { countTokens: CountTokens; maxMessageBytes: number }): PreparedAppend {
  const checked = checkAppend(input, deps.maxMessageBytes);
  return { rows: checked.messages.map((message) => toRow(message, deps.countTokens)), reportedInputTokens: checked.reportedInputTokens };
}

/**
 * Texts of one append adding up to this many characters are counted off the event loop. The
 * tokenizer costs up to ~2 µs per byte on token-dense text, so what stays inline blocks the
 * loop ~30 ms at worst, while a 2 MB message (~4 s) never does.
 */
export const OFF_LOOP_MIN_CHARS = 16_384;

export interface OffLoopCounting {
  countTokens: CountTokens;
  /** counts one text on another thread (app/token-count-pool.ts); inline when absent */
  countTokensOffLoop?: ((text: string) => Promise<number>) | undefined;
  /** a failed off-loop count is redone inline (the same function, so the same number) */
  onOffLoopFailure?: (error: unknown) => void;
  /** threads counting off the loop (the loop itself counts a share as large as one thread's) */
  offLoopThreads?: number | undefined;
  maxMessageBytes: number;
}

/**
 * `prepareAppend`, with the token counts of a big append shared between the threads and the
 * loop: the threads take the long texts and all but one share of the rest, while the loop counts
 * its share in slices of OFF_LOOP_MIN_CHARS, yielding between them, so one client's append uses
 * every core and no other request waits behind more than one slice.
 */
export async function prepareAppendOffLoop(input: AppendInput, deps: OffLoopCounting): Promise<PreparedAppend> {
  const offLoop = deps.countTokensOffLoop;
  if (!offLoop) return prepareAppend(input, deps);
  const checked = checkAppend(input, deps.maxMessageBytes);
  const texts = [...new Set(checked.messages.flatMap((message) => message.content.map(blockText)).filter((text) => text.length > 0))];
  const chars = texts.reduce((sum, text) => sum + text.length, 0);
  if (chars < OFF_LOOP_MIN_CHARS)
    return { rows: checked.messages.map((message) => toRow(message, deps.countTokens)), reportedInputTokens: checked.reportedInputTokens };
  let loopShare = Math.floor(chars / (Math.max(1, deps.offLoopThreads ?? 1) + 1));
  const onLoop: string[] = [];
  const offTheLoop: string[] = [];
  for (const text of texts) {
    if (text.length < OFF_LOOP_MIN_CHARS && text.length <= loopShare) {
      onLoop.push(text);
      loopShare -= text.length;
    } else offTheLoop.push(text);
  }
  const counted = new Map<string, number>();
  // sent first, so the threads count while the loop does its share
  const threads = Promise.all(
    offTheLoop.map(async (text) => {
      counted.set(
        text,
        await offLoop(text).catch((error: unknown) => {
          deps.onOffLoopFailure?.(error);
          return deps.countTokens(text);
        }),
      );
    }),
  );
  await countInSlices(onLoop, deps.countTokens, counted);
  await threads;
  const lookup: CountTokens = (text) => counted.get(text) ?? deps.countTokens(text);
  return { rows: checked.messages.map((message) => toRow(message, lookup)), reportedInputTokens: checked.reportedInputTokens };
}

/** Counts `texts` on the loop, yielding to other work after every OFF_LOOP_MIN_CHARS characters. */
async function countInSlices(texts: readonly string[], countTokens: CountTokens, into: Map<string, number>): Promise<void> {
  let sinceYield = 0;
  for (const text of texts) {
    into.set(text, countTokens(text));
    sinceYield += text.length;
    if (sinceYield >= OFF_LOOP_MIN_CHARS) {
      sinceYield = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}

/** Size limits and normalization: the messages to store, or a 4xx AppError naming the field. */
function checkAppend(
  input: AppendInput,
  maxMessageBytes: number,
): { messages: NormalizedMessage[]; reportedInputTokens: number | undefined } {
  input.messages.forEach((message, index) => {
    const bytes = jsonBytes(message, `messages.${index}`);
    if (bytes > maxMessageBytes) {
      throw new AppError('MESSAGE_TOO_LARGE', `message is ${bytes} bytes; the limit is ${maxMessageBytes}`, {
        status: 413,
        field: `messages.${index}`,
      });
    }
  });
  const normalized = normalizeMessages(input.messages, input.format);
  if (!normalized.ok) {
    const first = normalized.issues[0];
    throw new AppError('INVALID_MESSAGE', first ? `${first.field}: ${first.message}` : 'invalid message', {
      status: 400,
      details: normalized.issues,
    });
  }
  const lastReported = [...normalized.messages].reverse().find((m) => m.usage?.inputTokens !== undefined)?.usage?.inputTokens;
  return { messages: normalized.messages, reportedInputTokens: input.usage?.inputTokens ?? lastReported };
}

/**
 * A message's size as JSON. JSON.stringify recurses: a body of 200k nested arrays parses (the
 * parser is iterative) but overflows the stack here, which would be a 500 for a bad input.
 */
function jsonBytes(message: unknown, field: string): number {
  try {
    return Buffer.byteLength(JSON.stringify(message) ?? '', 'utf8');
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new AppError('INVALID_MESSAGE', `${field}: nested too deeply`, {
      status: 400,
      field,
      details: [{ field, message: 'nested too deeply' }],
    });
  }
}

function toRow(normalized: NormalizedMessage, countTokens: CountTokens): NewMessage {
  // a known harness wrapper (task notification, slash command, reminder) is stored as a meta turn
  const message = markMetaTurn(normalized);
  const ids = toolIdsOf(message.content);
  return {
    role: message.role,
    content: message.content,
    name: message.name,
    tokens: countMessageTokens(message, countTokens),
    toolUseIds: ids.opens,
    toolResultIds: ids.answers,
    usage: message.usage,
    metadata: message.metadata,
    pinned: message.pinned,
  };
}

/**
 * Stores a prepared append under the conversation lock: checks tool pairing against the
 * whole conversation, reserves consecutive seqs while updating the counters, inserts the rows.
 * Runs inside the caller's transaction, so a rejected append stores nothing.
 */
export function storeAppend(tx: Tx, conversation: ConversationRow, prepared: PreparedAppend) {
  return store(tx, conversation, prepared, { lock: true });
}

/** `storeAppend` for a caller that already holds the conversation lock in `tx`. */
export function storeAppendLocked(tx: Tx, conversation: ConversationRow, prepared: PreparedAppend) {
  return store(tx, conversation, prepared, { lock: false });
}

/**
 * The lock, the pairing read, the counters' update and the insert go out together, one
 * pipeline on the transaction's connection (one write, one wait instead of four): Postgres
 * runs them one after another, each seeing what the one before did, so the insert takes the
 * seqs the update just reserved from the row itself. The pairing is checked once the rows are
 * written: a violation throws, and the transaction's rollback takes the writes back.
 */
async function store(tx: Tx, conversation: ConversationRow, prepared: PreparedAppend, options: { lock: boolean }) {
  const { rows } = prepared;
  const opens = rows.flatMap((r) => r.toolUseIds);
  const answers = rows.flatMap((r) => r.toolResultIds);
  const [, pairing, updated, inserted] = await Promise.all([
    options.lock ? withConversationLock(tx, conversation.id) : undefined,
    toolPairingState(tx, conversation.id, [...opens, ...answers], answers),
    recordAppend(tx, {
      id: conversation.id,
      addedMessages: rows.length,
      addedTokens: rows.reduce((sum, row) => sum + row.tokens, 0),
      reportedInputTokens: prepared.reportedInputTokens,
    }),
    insertReservedMessages(tx, conversation.id, rows),
  ]);
  checkToolPairing(rows, pairing);
  return { inserted, conversation: updated };
}

function checkToolPairing(rows: readonly NewMessage[], { opened, answered }: ToolPairingState): void {
  rows.forEach((row, index) => {
    const blockIndex = (id: string, type: 'tool_use' | 'tool_result') =>
      row.content.findIndex((b) =>
        type === 'tool_use' ? b.type === 'tool_use' && b.id === id : b.type === 'tool_result' && b.tool_use_id === id,
      );
    for (const id of row.toolResultIds) {
      const field = `messages.${index}.content.${blockIndex(id, 'tool_result')}.tool_use_id`;
      if (!opened.has(id))
        throw pairingError('ORPHAN_TOOL_RESULT', `tool_result answers ${id}, which no tool_use of this conversation opened`, field);
      if (answered.has(id)) throw pairingError('DUPLICATE_TOOL_RESULT', `tool_use ${id} already has a result`, field);
      answered.add(id);
    }
    for (const id of row.toolUseIds) {
      const field = `messages.${index}.content.${blockIndex(id, 'tool_use')}.id`;
      if (opened.has(id)) throw pairingError('DUPLICATE_TOOL_USE_ID', `tool_use id ${id} is already used in this conversation`, field);
      opened.add(id);
    }
  });
}

const pairingError = (code: string, message: string, field: string) =>
  new AppError(code, message, { status: 400, field, details: [{ field, message }] });
