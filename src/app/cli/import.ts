import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';

import type { CompactdClient, InputMessage } from '../../client/index.js';
import type { NormalizedMessage } from '../../compaction/types.js';
import {
  type ImportedConversation,
  type ImportOptions,
  importTranscript,
  TRANSCRIPT_FORMATS,
  type TranscriptFormat,
  TranscriptImportError,
} from '../../importers/index.js';
import {
  type CliIo,
  connect,
  CONNECTION_OPTIONS,
  CONNECTION_USAGE,
  describeError,
  numberOption,
  processIo,
  resolveConnection,
  UsageError,
} from './common.js';
export { contentHash } from './import-target.js';
import { contentHash, ImportConflictError, importKey, type ImportTarget, prepareTarget } from './import-target.js';
import { createProgress } from './progress.js';

const USAGE = `usage: compactd import FILE [options]

Reads an agent transcript and appends it to a conversation of a running service:
Claude Code session JSONL, OpenAI or Anthropic chat JSON, τ-bench, mini-swe-agent or
OpenHands runs. Running the same import again (same file, conversation and options)
appends nothing: it says "already imported", or finishes a run that was interrupted. The
same file with other options into a conversation it was already imported into is refused.
When an append fails, a conversation this run created is deleted again.

  --conversation ID       target conversation, created when missing (default: the
                          transcript's own id; files with several runs get ID-1, ID-2…)
  --format F              ${TRANSCRIPT_FORMATS.join(' | ')} (default: detected)
  --model M               model of a new conversation (sets its context limit; default:
                          the model the transcript ran on, when it says)
  --context-limit N       context limit of a new conversation, in tokens
  --no-auto               create the conversation with auto-compaction off
  --compact               let auto-compaction run during the import (default: the import
                          starts none; the conversation's policy applies from the next append)
  --include-sidechains    Claude Code: keep subagent (sidechain) turns
  --compact-boundary B    Claude Code: stop (default) at the first compact_boundary, or include
  --dry-run               parse and report only; nothing is sent
${CONNECTION_USAGE}
`;

/** Per request: well under the service's 1000-message and 16 MiB body limits. */
const MAX_BATCH_MESSAGES = 500;
const MAX_BATCH_BYTES = 4 * 1024 * 1024;

/** Splits messages into append batches bounded by count and JSON size, in order. */
export function batchMessages<T>(messages: readonly T[], limits = { maxMessages: MAX_BATCH_MESSAGES, maxBytes: MAX_BATCH_BYTES }): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size = Buffer.byteLength(JSON.stringify(message));
    if (current.length > 0 && (current.length >= limits.maxMessages || bytes + size > limits.maxBytes)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

export interface AppendOutcome {
  appended: number;
  activeTokens: number;
  /** compactions an append triggered (auto policy) */
  triggeredJobs: string[];
}

/**
 * Appends messages in bounded batches. Each batch carries an Idempotency-Key derived from
 * `idempotencyPrefix` and its index, so a re-run after a failure appends only what is missing.
 */
export async function appendInBatches(
  client: CompactdClient,
  conversationId: string,
  messages: readonly NormalizedMessage[],
  options: { idempotencyPrefix: string; autoCompact?: boolean; onProgress?: (done: number, total: number) => void },
): Promise<AppendOutcome> {
  const outcome: AppendOutcome = { appended: 0, activeTokens: 0, triggeredJobs: [] };
  options.onProgress?.(0, messages.length);
  for (const [index, batch] of batchMessages(messages).entries()) {
    const body = { messages: batch as InputMessage[], ...(options.autoCompact === false && { autoCompact: false }) };
    const result = await client.appendMessages(conversationId, body, { idempotencyKey: `${options.idempotencyPrefix}-${index}` });
    outcome.appended += result.messages.length;
    outcome.activeTokens = result.activeTokens;
    if (result.compaction && !outcome.triggeredJobs.includes(result.compaction.id)) outcome.triggeredJobs.push(result.compaction.id);
    options.onProgress?.(outcome.appended, messages.length);
  }
  return outcome;
}

/** A transcript id usable as a conversation id (`[A-Za-z0-9._-]{1,128}`). */
export function conversationIdFrom(raw: string): string {
  const cleaned = raw
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 128);
  return cleaned === '' ? 'imported' : cleaned;
}

function parseImportArgs(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      ...CONNECTION_OPTIONS,
      conversation: { type: 'string' },
      format: { type: 'string' },
      model: { type: 'string' },
      'context-limit': { type: 'string' },
      'no-auto': { type: 'boolean' },
      compact: { type: 'boolean' },
      'include-sidechains': { type: 'boolean' },
      'compact-boundary': { type: 'string' },
      'dry-run': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const format = values.format;
  if (format !== undefined && !(TRANSCRIPT_FORMATS as readonly string[]).includes(format))
    throw new UsageError(`--format must be one of ${TRANSCRIPT_FORMATS.join(', ')}`);
  const boundary = values['compact-boundary'];
  if (boundary !== undefined && boundary !== 'stop' && boundary !== 'include')
    throw new UsageError('--compact-boundary must be stop or include');
  const contextLimit = numberOption('context-limit', values['context-limit'], (n) => Number.isInteger(n) && n >= 1024);
  const importOptions: ImportOptions = {
    ...(format ? { format: format as TranscriptFormat } : {}),
    ...(values['include-sidechains'] ? { includeSidechains: true } : {}),
    ...(boundary ? { compactBoundary: boundary } : {}),
  };
  return { values, positionals, importOptions, contextLimit };
}

/** Reads and parses a transcript file; an exit code (after a message naming the file and line) when it cannot. */
async function readTranscript(
  file: string,
  options: ImportOptions,
  io: CliIo,
): Promise<{ text: string; format: TranscriptFormat; conversations: ImportedConversation[] } | number> {
  try {
    const text = await readFile(file, 'utf8');
    return { text, ...importTranscript(text, { ...options, fileName: path.basename(file) }) };
  } catch (error) {
    if (error instanceof TranscriptImportError) {
      io.stderr.write(`compactd: ${file}${error.line === undefined ? '' : `:${error.line}`}: ${error.code}: ${error.message}\n`);
      return 1;
    }
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      io.stderr.write(`compactd: no such file: ${file}\n`);
      return 1;
    }
    throw error;
  }
}

/**
 * Creates (or continues) one conversation and appends one imported transcript to it, with
 * progress. Messages a previous run of the same import stored are replayed, not stored
 * again; the count of new messages tells a no-op from an import.
 */
async function importOne(client: CompactdClient, io: CliIo, target: ImportTarget, conversation: ImportedConversation): Promise<void> {
  const id = target.conversationId;
  const prepared = await prepareTarget(client, target);
  const before = prepared.created ? 0 : prepared.conversation.messageCount;
  const progress = createProgress({ label: `importing into ${id}`, unit: 'messages', stream: io.stderr });
  let outcome: AppendOutcome;
  try {
    outcome = await appendInBatches(client, id, conversation.messages, {
      idempotencyPrefix: importKey(target),
      autoCompact: target.compact,
      onProgress: (d, t) => progress.update(d, t),
    });
  } catch (error) {
    progress.finish('stopped');
    throw new ImportInterruptedError(id, error, prepared.created ? await removeCreated(client, id) : 'kept');
  }
  const after = await client.getConversation(id);
  const added = after.messageCount - before;
  progress.finish(`${outcome.appended} messages`);
  const window = `${after.model ?? 'no model'}, ${after.contextLimit.toLocaleString('en-US')}-token window`;
  const usage = `${after.activeTokens.toLocaleString('en-US')} active tokens (${Math.round(after.contextUsage.ratio * 100)}%)`;
  if (prepared.resumed && added === 0) {
    io.stdout.write(`${id}: already imported (${outcome.appended} messages); nothing appended\n`);
  } else {
    const verb = prepared.created ? 'created' : prepared.resumed ? 'finished importing into' : 'appended to';
    io.stdout.write(`${verb} ${id}: ${added} messages (${conversation.stats.toolPairs} tool pairs), ${window}, ${usage}\n`);
  }
  for (const jobId of outcome.triggeredJobs)
    io.stdout.write(`  the append triggered compaction job ${jobId} (follow it: compactd compact ${id})\n`);
  if (!target.compact && after.contextUsage.warning) {
    io.stdout.write(`  past the warning ratio: the next append may compact it, or compact now: compactd compact ${id}\n`);
  }
}

/**
 * A failed append. A conversation this run created is deleted again, so a failure leaves
 * nothing half-made; one that existed before (a live conversation, or an earlier run of this
 * import) is kept, and running the same command again finishes the import.
 */
class ImportInterruptedError extends Error {
  constructor(
    readonly conversationId: string,
    override readonly cause: unknown,
    readonly conversation: 'removed' | 'kept',
  ) {
    super(`import into ${conversationId} interrupted`);
  }
}

async function removeCreated(client: CompactdClient, id: string): Promise<'removed' | 'kept'> {
  try {
    await client.deleteConversation(id);
    return 'removed';
  } catch {
    return 'kept';
  }
}

/** `compactd import FILE [options]`. */
export async function runImport(args: string[], io: CliIo = processIo()): Promise<number> {
  let parsed: ReturnType<typeof parseImportArgs>;
  try {
    parsed = parseImportArgs(args);
  } catch (error) {
    io.stderr.write(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals, importOptions, contextLimit } = parsed;
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const file = positionals[0];
  if (!file || positionals.length > 1) {
    io.stderr.write(USAGE);
    return 2;
  }
  const read = await readTranscript(file, importOptions, io);
  if (typeof read === 'number') return read;
  const { text, format, conversations } = read;
  const target = (conversation: ImportedConversation, index: number) =>
    values.conversation
      ? conversations.length > 1
        ? `${values.conversation}-${index + 1}`
        : values.conversation
      : conversationIdFrom(conversation.id);
  io.stderr.write(`${file}: ${format}, ${conversations.length} conversation(s)\n`);
  if (values['dry-run']) {
    conversations.forEach((c, i) =>
      io.stdout.write(
        `${target(c, i)}: ${c.messages.length} messages, ${c.stats.toolPairs} tool pairs, ${c.stats.droppedLines} lines dropped, model ${values.model ?? c.model ?? 'not given'}\n`,
      ),
    );
    return 0;
  }
  const connection = resolveConnection(values, io.env);
  const client = connect(connection);
  const fileHash = contentHash(text);
  try {
    for (const [index, conversation] of conversations.entries()) {
      await importOne(
        client,
        io,
        {
          conversationId: target(conversation, index),
          part: index,
          fileName: path.basename(file),
          fileHash,
          format,
          importOptions: {
            includeSidechains: importOptions.includeSidechains ?? false,
            compactBoundary: importOptions.compactBoundary ?? 'stop',
          },
          model: values.model ?? conversation.model,
          contextLimit,
          noAuto: values['no-auto'] === true,
          compact: values.compact === true,
          transcriptMetadata: conversation.metadata,
        },
        conversation,
      );
    }
    return 0;
  } catch (error) {
    if (error instanceof ImportConflictError) {
      io.stderr.write(`compactd: IMPORT_CONFLICT: ${error.message}\n`);
      return 1;
    }
    if (error instanceof ImportInterruptedError) {
      io.stderr.write(describeError(error.cause, connection));
      io.stderr.write(
        error.conversation === 'removed'
          ? `the import failed; the conversation ${error.conversationId} it had created was deleted again, nothing is left behind\n`
          : `the import into ${error.conversationId} stopped part way: run the same command again to finish it (what is stored is not appended twice)\n`,
      );
      return 1;
    }
    io.stderr.write(describeError(error, connection));
    return 1;
  }
}
