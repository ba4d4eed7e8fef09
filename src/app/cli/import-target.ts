import { createHash } from 'node:crypto';

import { type CompactdClient, type Conversation, type CreateConversationRequest, isCompactdError } from '../../client/index.js';
import type { ImportOptions } from '../../importers/index.js';

/**
 * Where one transcript conversation goes and how: the target conversation, the options of
 * the run, and the key that names this import. The key hashes the file, the target and every
 * option, so each Idempotency-Key of the run means one exact request: running the same
 * import again replays (a no-op, or the rest of an interrupted run), and the same file with
 * other options or into another conversation never collides with it.
 */
export interface ImportTarget {
  conversationId: string;
  /** part of a multi-conversation file (τ-bench, OpenHands), 0 otherwise */
  part: number;
  fileName: string;
  /** sha256 of the file's text */
  fileHash: string;
  format: string;
  importOptions: Pick<ImportOptions, 'includeSidechains' | 'compactBoundary'>;
  /** the model of the new conversation: --model, else the transcript's, else none (the service's default window) */
  model: string | undefined;
  contextLimit: number | undefined;
  noAuto: boolean;
  /** let the conversation's auto policy compact during the import */
  compact: boolean;
  transcriptMetadata: Record<string, unknown>;
}

/** What a conversation made by an import records about it, under `metadata.import`. */
export interface ImportRecord {
  key: string;
  file: string;
  sha256: string;
  format: string;
  options: Record<string, unknown>;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The hash that names a file in an import's key. */
export const contentHash = (text: string): string => sha256(text).slice(0, 24);

function optionsOf(target: ImportTarget): Record<string, unknown> {
  return {
    ...target.importOptions,
    ...(target.model !== undefined && { model: target.model }),
    ...(target.contextLimit !== undefined && { contextLimit: target.contextLimit }),
    ...(target.noAuto && { noAuto: true }),
    ...(target.compact && { compact: true }),
  };
}

/** `import-<hash>`: the prefix of every Idempotency-Key of this import. */
export function importKey(target: ImportTarget): string {
  const identity = {
    file: target.fileHash,
    conversation: target.conversationId,
    part: target.part,
    format: target.format,
    options: optionsOf(target),
  };
  return `import-${sha256(JSON.stringify(identity)).slice(0, 32)}`;
}

export function importRecord(target: ImportTarget): ImportRecord {
  return { key: importKey(target), file: target.fileName, sha256: target.fileHash, format: target.format, options: optionsOf(target) };
}

/** The body that creates the target conversation, recording the import in its metadata (and its parent, for a sub-agent). */
export function createBody(target: ImportTarget, parentId?: string): CreateConversationRequest & { id: string } {
  return {
    id: target.conversationId,
    ...(parentId !== undefined && { parentId }),
    ...(target.model !== undefined && { model: target.model }),
    ...(target.contextLimit !== undefined && { contextLimit: target.contextLimit }),
    ...(target.noAuto && { policy: { auto: false } }),
    metadata: { ...target.transcriptMetadata, importedFrom: target.fileName, format: target.format, import: importRecord(target) },
  };
}

/** An import that would duplicate history: the target already holds this file, imported with other options. */
export class ImportConflictError extends Error {}

export interface PreparedTarget {
  conversation: Conversation;
  created: boolean;
  /** the target held this very import already (a re-run: replays, or finishes an interrupted run) */
  resumed: boolean;
}

/**
 * Finds or creates the target conversation. A conversation created by an import of the same
 * file with other options is refused before anything is appended: those options give other
 * messages, which would be appended next to the ones already there. Any other existing
 * conversation is continued.
 */
export async function prepareTarget(client: CompactdClient, target: ImportTarget): Promise<PreparedTarget> {
  const key = importKey(target);
  const existing = await findConversation(client, target.conversationId);
  if (existing) {
    const record = recordOf(existing);
    if (record?.key === key) return { conversation: existing, created: false, resumed: true };
    if (record?.sha256 === target.fileHash) {
      throw new ImportConflictError(
        `conversation ${target.conversationId} already holds ${record.file} imported with other options (${describeOptions(record.options)}; now ${describeOptions(optionsOf(target))}); ` +
          'import into another conversation (--conversation ID), or run the first import again as it was',
      );
    }
    return { conversation: existing, created: false, resumed: false };
  }
  try {
    // No key of the import's own here: a conversation deleted after a failed run must be created anew, not replayed.
    const conversation = await client.createConversation(createBody(target, await parentOf(client, target)));
    return { conversation, created: true, resumed: false };
  } catch (error) {
    // Created meanwhile by someone else: check it like any existing conversation.
    if (isCompactdError(error, 'CONVERSATION_EXISTS')) return prepareTarget(client, target);
    throw error;
  }
}

/**
 * A Claude Code sub-agent's transcript (its `agentId`, the `sessionId` of the session that
 * started it) is linked to that session's conversation when it is already imported under its
 * session id, so the two are listed together (`GET /v1/conversations?parentId=`).
 */
async function parentOf(client: CompactdClient, target: ImportTarget): Promise<string | undefined> {
  const { agentId, sessionId } = target.transcriptMetadata;
  if (typeof agentId !== 'string' || typeof sessionId !== 'string' || sessionId === target.conversationId) return undefined;
  return (await findConversation(client, sessionId)) ? sessionId : undefined;
}

async function findConversation(client: CompactdClient, id: string): Promise<Conversation | null> {
  try {
    return await client.getConversation(id);
  } catch (error) {
    if (isCompactdError(error, 'CONVERSATION_NOT_FOUND')) return null;
    throw error;
  }
}

function recordOf(conversation: Conversation): ImportRecord | undefined {
  const record = conversation.metadata['import'];
  if (typeof record !== 'object' || record === null) return undefined;
  const { key, sha256: hash } = record as Partial<ImportRecord>;
  return typeof key === 'string' && typeof hash === 'string' ? (record as ImportRecord) : undefined;
}

function describeOptions(options: Record<string, unknown>): string {
  const entries = Object.entries(options);
  return entries.length === 0 ? 'no options' : entries.map(([k, v]) => `${k}=${String(v)}`).join(' ');
}
