import { sql } from 'drizzle-orm';
import type { Block, MessageKind, Role } from '../../compaction/types.js';
import type { Db } from '../../db/client.js';
import { withConversationLock } from '../../db/locks.js';
import { getConversation, getConversationById, insertConversation, type ConversationRow } from '../../db/repos/conversations.js';
export { getConversation };
import { findActiveJob, getJob, insertJob } from '../../db/repos/jobs.js';
import { archivedMessages, messages } from '../../db/schema.js';
import { contextLimitFor, DEFAULT_CONTEXT_TOKENS } from '../../llm/models.js';
import { prepareAppendOffLoop, storeAppendLocked } from '../append-messages.js';
import type { ApiDeps, AppendEffects } from '../deps.js';
import { cachedAt, remember, type CachedConversation } from './conversation-cache.js';
import { positionOfKey } from './history.js';
import type { GatewayProvider } from './identity.js';
import type { ActiveRow } from './upstream-body.js';

/** Metadata key under which the gateway records a stored message's history key (history.ts). */
export const GATEWAY_KEY = 'gatewayKey';

/** The conversation, created on first sight with the model's window (an existing one keeps its settings). */
export async function ensureConversation(db: Db, tenantId: string, externalId: string, model: unknown): Promise<ConversationRow> {
  const existing = await getConversation(db, tenantId, externalId);
  if (existing) return existing;
  const name = typeof model === 'string' && model !== '' ? model : null;
  await insertConversation(db, {
    tenantId,
    externalId,
    model: name,
    contextLimit: name ? contextLimitFor(name) : DEFAULT_CONTEXT_TOKENS,
    policy: {},
    metadata: { createdBy: 'gateway' },
  });
  const row = await getConversation(db, tenantId, externalId);
  if (!row) throw new Error(`conversation ${externalId} vanished after creation`);
  return row;
}

/** The stored keys of `conversation` as of its row's version: from the cache when that version is the cached one. */
export async function storedKeysOf(db: Pick<Db, 'execute'>, conversation: Pick<ConversationRow, 'id' | 'version'>): Promise<Map<number, string>> {
  const cached = cachedAt(conversation.id, conversation.version);
  if (cached) return cached.keys;
  const keys = await readStoredKeys(db, conversation.id);
  remember(conversation.id, { version: conversation.version, keys, rows: null });
  return keys;
}

/** The active history of `conversation` as of its row's version (conversation-cache.ts). */
export async function activeRowsOf(db: Db, conversation: Pick<ConversationRow, 'id' | 'version'>): Promise<ActiveRow[]> {
  const cached = cachedAt(conversation.id, conversation.version);
  if (cached?.rows) return cached.rows;
  const rows = await readActiveRows(db, conversation.id);
  if (cached) cached.rows = rows;
  else remember(conversation.id, { version: conversation.version, keys: await readStoredKeys(db, conversation.id), rows });
  return rows;
}

/** position → key of every message the gateway stored in the conversation, active or archived. */
export async function readStoredKeys(db: Pick<Db, 'execute'>, conversationId: string): Promise<Map<number, string>> {
  const rows = await db.execute<{ key: string }>(sql`
    select ${messages.metadata} ->> ${GATEWAY_KEY} as key from ${messages}
     where ${messages.conversationId} = ${conversationId} and ${messages.metadata} ? ${GATEWAY_KEY}
    union
    select ${archivedMessages.metadata} ->> ${GATEWAY_KEY} from ${archivedMessages}
     where ${archivedMessages.conversationId} = ${conversationId} and ${archivedMessages.metadata} ? ${GATEWAY_KEY}`);
  const stored = new Map<number, string>();
  for (const { key } of rows) {
    const position = positionOfKey(key);
    if (position !== null) stored.set(position, key);
  }
  return stored;
}

export interface HistoryItem {
  position: number;
  key: string;
  storable: Record<string, unknown>;
}

export interface AppendOutcome {
  conversation: ConversationRow;
  compaction: { id: string; status: string } | null;
}

/**
 * Appends the history items compactd has not stored yet, in one transaction under the
 * conversation lock; the stored keys are read again under the lock, so two requests of one
 * conversation (or a request and the previous answer being stored) never store a message twice.
 * `inputTokens`: the provider-reported prompt of the call that produced the last item.
 */
export async function appendHistory(deps: ApiDeps, conversation: ConversationRow, provider: GatewayProvider, items: readonly HistoryItem[], inputTokens?: number): Promise<AppendOutcome> {
  if (items.length === 0) return { conversation, compaction: null };
  const prepared = await prepareAppendOffLoop(
    {
      format: provider,
      messages: items.map((item) => ({ ...item.storable, metadata: { [GATEWAY_KEY]: item.key } })),
      ...(inputTokens === undefined ? {} : { usage: { inputTokens } }),
    },
    { countTokens: deps.countTokens, countTokensOffLoop: deps.countTokensOffLoop, offLoopThreads: deps.offLoopThreads, maxMessageBytes: deps.config.limits.maxMessageBytes },
  );
  const effects: AppendEffects = { webhookDeliveryIds: [], idleCheckDelayMs: null };
  const committed: { entry: CachedConversation | null } = { entry: null };
  const outcome = await deps.db.transaction(async (tx) => {
    await withConversationLock(tx, conversation.id);
    // under the lock: what is stored now (another request may have appended since the plan)
    const locked = (await getConversationById(tx, conversation.id)) ?? conversation;
    const stored = await storedKeysOf(tx, locked);
    const fresh = items.map((item, index) => ({ item, row: prepared.rows[index] })).filter(({ item }) => !stored.has(item.position));
    if (fresh.length === 0) return { conversation: locked, compaction: null };
    const rows = fresh.flatMap(({ row }) => (row ? [row] : []));
    const result = await storeAppendLocked(tx, locked, { rows, reportedInputTokens: prepared.reportedInputTokens });
    const keys = new Map(stored);
    for (const { item } of fresh) keys.set(item.position, item.key);
    // the rows this append adds, at the end of the active history read at the locked version
    const before = cachedAt(conversation.id, locked.version)?.rows ?? null;
    const added: ActiveRow[] = result.inserted.map((inserted, index) => ({
      seq: inserted.seq,
      kind: 'message',
      role: rows[index]?.role ?? 'user',
      position: fresh[index]?.item.position ?? null,
      rewritten: false,
      content: null,
    }));
    // cached only once committed: a rolled-back append must not leave its keys behind
    committed.entry = { version: result.conversation.version, keys, rows: before ? [...before, ...added] : null };
    const compaction = await deps.afterAppend(tx, result.conversation, effects, { quotas: deps.config.quotas });
    return { conversation: result.conversation, compaction };
  });
  if (committed.entry) remember(conversation.id, committed.entry);
  if (outcome.compaction !== null || effects.webhookDeliveryIds.length > 0 || effects.idleCheckDelayMs !== null) {
    await deps.onAppendCommitted?.(conversation.id, effects);
  }
  if (outcome.compaction?.status === 'queued') await deps.compactions.enqueue({ id: outcome.compaction.id, tenantId: conversation.tenantId });
  return outcome;
}

/** The active history in seq order; content only for the rows not sent as the client's own message. */
export async function readActiveRows(db: Db, conversationId: string): Promise<ActiveRow[]> {
  const rows = await db.execute<{ seq: string; kind: MessageKind; role: Role; key: string | null; rewritten: boolean; content: Block[] | null }>(sql`
    select m.seq, m.kind, m.role, m.key, m.rewritten, case when m.key is null or m.rewritten then m.content end as content
      from (
        select ${messages.seq} as seq, ${messages.kind} as kind, ${messages.role} as role, ${messages.content} as content,
               ${messages.metadata} ->> ${GATEWAY_KEY} as key,
               exists (select 1 from ${archivedMessages} a
                        where a.conversation_id = ${messages.conversationId} and a.seq = ${messages.seq} and a.reason in ('masked', 'truncated')) as rewritten
          from ${messages} where ${messages.conversationId} = ${conversationId}
      ) m
     order by m.seq`);
  return rows.map((row) => ({
    seq: Number(row.seq),
    kind: row.kind,
    role: row.role,
    position: row.key === null ? null : positionOfKey(row.key),
    rewritten: row.rewritten,
    content: row.content,
  }));
}

/**
 * The conversation's active compaction, or a new one: an `api` job down to `targetTokens`
 * (a provider said the prompt does not fit), else an `auto` job (the policy's target).
 */
export async function startCompaction(deps: ApiDeps, conversation: ConversationRow, targetTokens?: number): Promise<string> {
  const job = await deps.db.transaction(async (tx) => {
    const active = await findActiveJob(tx, conversation.id);
    if (active) return { id: active.id, fresh: false };
    const inserted = await insertJob(
      tx,
      targetTokens === undefined
        ? { tenantId: conversation.tenantId, conversationId: conversation.id, trigger: 'auto', options: {} }
        : { tenantId: conversation.tenantId, conversationId: conversation.id, trigger: 'api', options: { target: { tokens: targetTokens } } },
    );
    if (inserted) return { id: inserted.id, fresh: true };
    const raced = await findActiveJob(tx, conversation.id);
    if (!raced) throw new Error(`no compaction could be started for conversation ${conversation.externalId}`);
    return { id: raced.id, fresh: false };
  });
  if (job.fresh) await deps.compactions.enqueue({ id: job.id, tenantId: conversation.tenantId });
  return job.id;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'noop']);

/** Waits for a compaction to end, at most `waitMs`; true when it ended (however it ended). */
export async function waitForCompaction(deps: ApiDeps, tenantId: string, jobId: string, waitMs: number, signal: AbortSignal): Promise<boolean> {
  if (deps.jobWaiters) {
    const job = await deps.jobWaiters.wait({ tenantId, jobId, waitMs, signal });
    return job !== null && TERMINAL.has(job.status);
  }
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline && !signal.aborted) {
    const job = await getJob(deps.db, jobId);
    if (!job || TERMINAL.has(job.status)) return job !== null;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}
