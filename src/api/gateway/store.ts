import { decideAutoCompaction } from '../../compaction/trigger/index.js';
import type { Db } from '../../db/client.js';
import { withConversationLock } from '../../db/locks.js';
import {
  type ConversationRow,
  getConversation,
  getConversationById,
  insertConversation,
  triggerStateOf,
} from '../../db/repos/conversations.js';
import {
  archiveBeforeProviderClip,
  GATEWAY_KEY,
  positionOfKey,
  readActiveRows,
  readStoredKeys,
  rewindActiveHistory,
  type StoredKeys,
} from '../../db/repos/gateway-history.js';
import { findActiveJob, insertJob } from '../../db/repos/jobs.js';
import { autoTriggerInputs } from '../../db/repos/tenants.js';
import { AppError } from '../../lib/errors.js';
import { contextLimitFor, DEFAULT_CONTEXT_TOKENS } from '../../llm/models.js';
import type { AgentSetup, CompactionOptions } from '../../queue/job-options.js';
import { prepareAppendOffLoop, type PreparedAppend, storeAppendLocked } from '../append-messages.js';
import { autoCompactionDeferral } from '../compaction-quota.js';
import type { ApiDeps, AppendEffects } from '../deps.js';
import { cachedAt, type CachedConversation, remember } from './conversation-cache.js';
import { planSync, type SyncPlan } from './history.js';
import { PROVIDER_COMPACTION_KEY, withProviderClip } from './provider-clip.js';
import { unstorableStandIn } from './stand-in.js';
import type { ActiveRow } from './upstream-body.js';
import type { GatewayWire } from './wire.js';

export { GATEWAY_KEY, getConversation };

/** Where a conversation the gateway creates comes from: the client's first request, or another conversation it is a thread or sub-agent of. */
export interface Origin {
  model: unknown;
  /** the conversation this one branches from (a thread of the same session, a sub-agent's parent): its settings are inherited */
  parent?: { conversation: ConversationRow; relation: 'thread' | 'agent' };
}

/** The conversation, created on first sight with the model's window (an existing one keeps its settings). */
export async function ensureConversation(db: Db, tenantId: string, externalId: string, origin: Origin): Promise<ConversationRow> {
  const existing = await getConversation(db, tenantId, externalId);
  if (existing) return existing;
  const name = typeof origin.model === 'string' && origin.model !== '' ? origin.model : null;
  const parent = origin.parent?.conversation;
  await insertConversation(db, {
    tenantId,
    externalId,
    model: parent?.model ?? name,
    contextLimit: parent?.contextLimit ?? (name ? contextLimitFor(name) : DEFAULT_CONTEXT_TOKENS),
    policy: parent?.policy ?? {},
    // linked to its parent: `GET /v1/conversations?parentId=` lists a session's threads and sub-agents
    parentId: parent?.id ?? null,
    metadata: { createdBy: 'gateway', ...(origin.parent ? { relation: origin.parent.relation } : {}) },
  });
  const row = await getConversation(db, tenantId, externalId);
  if (!row) throw new Error(`conversation ${externalId} vanished after creation`);
  return row;
}

/** The stored keys of `conversation` as of its row's version: from the cache when that version is the cached one. */
export async function storedKeysOf(db: Pick<Db, 'execute'>, conversation: Pick<ConversationRow, 'id' | 'version'>): Promise<StoredKeys> {
  const cached = cachedAt(conversation.id, conversation.version);
  if (cached) return cached.stored;
  const stored = await readStoredKeys(db, conversation.id);
  remember(conversation.id, { version: conversation.version, stored, rows: null });
  return stored;
}

/** The active history of `conversation` as of its row's version (conversation-cache.ts). */
export async function activeRowsOf(db: Db, conversation: Pick<ConversationRow, 'id' | 'version'>): Promise<ActiveRow[]> {
  const cached = cachedAt(conversation.id, conversation.version);
  if (cached?.rows) return cached.rows;
  const rows = (await readActiveRows(db, conversation.id)).map(({ key, ...row }) => ({
    ...row,
    position: key === null ? null : positionOfKey(key),
  }));
  if (cached) cached.rows = rows;
  else remember(conversation.id, { version: conversation.version, stored: await readStoredKeys(db, conversation.id), rows });
  return rows;
}

/** The client's history, keyed (history.ts), in the storable form of each message. */
export interface ClientHistory {
  keys: readonly string[];
  storable(position: number): Record<string, unknown>;
  /** the history opens with a provider's compaction stored (or to be stored) at this position (provider-clip.ts) */
  clipAt?: number;
  /** false: what this call appends starts no compaction of compactd's (the request asked the provider to compact) */
  autoCompact?: boolean;
  /** the agent's model, system and tools (agent-setup.ts): a compaction this append starts may use the provider's own */
  agent?: AgentSetup | undefined;
}

export type SyncOutcome =
  | { kind: 'stored'; conversation: ConversationRow; compaction: { id: string; status: string } | null; rewound: number }
  /** nothing stored: the plan under the lock was not one this call follows */
  | { kind: 'not-followed'; conversation: ConversationRow; plan: SyncPlan };

/**
 * Makes the stored history the client's, in one transaction under the conversation lock: the
 * plan (history.ts `planSync`) is made again under the lock, so two requests of one
 * conversation (or a request and the previous answer being stored) never store a message
 * twice. `follow: 'rewinds'` (a request) also follows a client that went back to an earlier
 * point; `follow: 'extensions'` (storing the answer to a request) stores only what extends the
 * stored history: a client that moved on since is not undone by an older request's answer.
 * A message compactd cannot store as it is (too large, a shape it refuses, a tool id the
 * conversation already used) is stored as a marked stand-in (stand-in.ts): whatever the
 * gateway cannot store, the conversation goes on. `inputTokens`: the provider-reported prompt
 * of the call that produced the last message.
 */
export async function syncHistory(
  deps: ApiDeps,
  conversation: ConversationRow,
  provider: GatewayWire,
  client: ClientHistory,
  follow: 'rewinds' | 'extensions',
  inputTokens?: number,
): Promise<SyncOutcome> {
  const first = planSync(client.keys, withProviderClip(await storedKeysOf(deps.db, conversation), client.clipAt));
  const fromOf = (plan: SyncPlan) =>
    plan.kind === 'extend' ? plan.fromPosition : plan.kind === 'rewind' ? plan.position : client.keys.length;
  const stand: Map<number, Record<string, unknown>> = new Map();
  for (let attempt = 0; ; attempt += 1) {
    let from = fromOf(first);
    let prepared: PreparedAppend;
    try {
      prepared = await prepareItems(deps, provider, client, from, stand, inputTokens);
      return await storeUnderLock();
    } catch (error) {
      const position = failedPosition(error, from);
      // each attempt stands in one more message: bounded by the history's length
      if (position === null || stand.has(position) || attempt > client.keys.length) throw error;
      stand.set(position, unstorableStandIn(client.storable(position), error as AppError, deps.config.limits.maxMessageBytes));
    }

    async function storeUnderLock(): Promise<SyncOutcome> {
      const effects: AppendEffects = { webhookDeliveryIds: [], idleCheckDelayMs: null };
      const committed: { entry: CachedConversation | null } = { entry: null };
      const outcome = await deps.db.transaction(async (tx): Promise<SyncOutcome> => {
        // one pipeline: the lock, then (once it is granted) the row and the trigger's read, which
        // depends on neither the rows nor the counters this call writes
        const [, current, triggerInputs] = await Promise.all([
          withConversationLock(tx, conversation.id),
          getConversationById(tx, conversation.id),
          autoTriggerInputs(tx, conversation),
        ]);
        let locked = current ?? conversation;
        const stored = await storedKeysOf(tx, locked);
        const plan = planSync(client.keys, withProviderClip(stored, client.clipAt));
        const followed = plan.kind === 'extend' || (plan.kind === 'rewind' && follow === 'rewinds');
        if (!followed) return { kind: 'not-followed', conversation: locked, plan };
        // another request moved the stored history since the first plan: prepare what this one needs
        if (fromOf(plan) !== from) {
          from = fromOf(plan);
          prepared = await prepareItems(deps, provider, client, from, stand, inputTokens);
        }
        let rewound = 0;
        const keys = new Map(stored.keys);
        let activeFrom = stored.activeFrom;
        if (plan.kind === 'rewind') {
          rewound = await rewindActiveHistory(tx, locked.id, plan.position);
          for (const position of [...keys.keys()]) if (position >= plan.position) keys.delete(position);
          locked = (await getConversationById(tx, conversation.id)) ?? locked;
        }
        if (prepared.rows.length === 0) {
          committed.entry = { version: locked.version, stored: { keys, activeFrom: Math.min(activeFrom, keys.size) }, rows: null };
          return { kind: 'stored', conversation: locked, compaction: null, rewound };
        }
        const result = await storeAppendLocked(tx, locked, prepared);
        // a provider's compaction was stored: the turns before it are the provider's now (provider-clip.ts)
        const clip = lastProviderClipRow(prepared);
        if (clip !== -1) await archiveBeforeProviderClip(tx, locked.id, result.inserted[clip]?.seq ?? 0);
        const appended = clip === -1 ? result.conversation : ((await getConversationById(tx, conversation.id)) ?? result.conversation);
        for (let position = from; position < client.keys.length; position += 1) keys.set(position, client.keys[position] as string);
        if (activeFrom >= from) activeFrom = Math.min(activeFrom, from);
        // the rows this append adds, at the end of the active history read at the locked version
        const before = rewound === 0 ? (cachedAt(conversation.id, locked.version)?.rows ?? null) : null;
        const added: ActiveRow[] = result.inserted.map((inserted, index) => ({
          seq: inserted.seq,
          kind: 'message',
          role: prepared.rows[index]?.role ?? 'user',
          position: from + index,
          rewritten: false,
          content: null,
        }));
        // cached only once committed: a rolled-back append must not leave its keys behind
        // (a clip moved rows out of the active history: the next request reads them from the database)
        committed.entry =
          clip === -1
            ? { version: result.conversation.version, stored: { keys, activeFrom }, rows: before ? [...before, ...added] : null }
            : null;
        const compaction = await deps.afterAppend(tx, appended, effects, {
          quotas: deps.config.quotas,
          triggerInputs,
          ...(client.autoCompact === false ? { autoCompact: false } : {}),
          // over the window, the request waits for the compaction this append starts (routes.ts)
          jobOptions: {
            ...(client.agent ? { agent: client.agent } : {}),
            ...(result.conversation.activeTokens > result.conversation.contextLimit ? { agentWaiting: true } : {}),
          },
        });
        return { kind: 'stored', conversation: appended, compaction, rewound };
      });
      if (committed.entry) remember(conversation.id, committed.entry);
      if (outcome.kind === 'stored') {
        if (outcome.compaction !== null || effects.webhookDeliveryIds.length > 0 || effects.idleCheckDelayMs !== null) {
          await deps.onAppendCommitted?.(conversation.id, effects);
        }
        if (outcome.compaction?.status === 'queued')
          await deps.compactions.enqueue({ id: outcome.compaction.id, tenantId: conversation.tenantId });
      }
      return outcome;
    }
  }
}

/** The index of the last prepared row holding a provider's compaction, or -1. */
function lastProviderClipRow(prepared: PreparedAppend): number {
  for (let index = prepared.rows.length - 1; index >= 0; index -= 1) {
    if (prepared.rows[index]?.metadata?.[PROVIDER_COMPACTION_KEY] !== undefined) return index;
  }
  return -1;
}

function prepareItems(
  deps: ApiDeps,
  provider: GatewayWire,
  client: ClientHistory,
  from: number,
  stand: ReadonlyMap<number, Record<string, unknown>>,
  inputTokens: number | undefined,
): Promise<PreparedAppend> {
  const messages = [];
  for (let position = from; position < client.keys.length; position += 1) {
    const standIn = stand.get(position);
    const message = standIn ?? client.storable(position);
    messages.push({ ...message, metadata: { ...(message['metadata'] as object | undefined), [GATEWAY_KEY]: client.keys[position] } });
  }
  return prepareAppendOffLoop(
    // Responses items are stored in the Anthropic shape (responses-items.ts)
    {
      format: provider === 'responses' ? 'anthropic' : provider,
      messages,
      ...(inputTokens === undefined ? {} : { usage: { inputTokens } }),
    },
    {
      countTokens: deps.countTokens,
      countTokensOffLoop: deps.countTokensOffLoop,
      offLoopThreads: deps.offLoopThreads,
      maxMessageBytes: deps.config.limits.maxMessageBytes,
    },
  );
}

/** The history position of the message an append refused (its error names `messages.<index>`), or null when it refused the append as a whole. */
function failedPosition(error: unknown, from: number): number | null {
  if (!(error instanceof AppError) || error.status >= 500) return null;
  const fields = [error.field, ...((error.details as Array<{ field?: string }> | undefined) ?? []).map((d) => d.field)];
  for (const field of fields) {
    const match = /^messages\.(\d+)/.exec(field ?? '');
    if (match) return from + Number(match[1]);
  }
  return null;
}

/** Why a gateway request does not get a compaction now, or the job it waits for. */
export type CompactionStart = { jobId: string } | { refused: string };

/**
 * A compaction for a request that does not fit: the conversation's active one, or a new one
 * under the same rules as the append's auto trigger — the policy (auto off, idle schedule,
 * cooldown, the pause after a revert or a failed attempt, too few messages) and the tenant's
 * compaction quotas. `targetTokens`: a provider said the prompt does not fit, compact down to
 * this (an `api` job); else an `auto` job with the policy's target.
 */
export async function startCompaction(
  deps: ApiDeps,
  conversation: ConversationRow,
  targetTokens?: number,
  agent?: AgentSetup,
): Promise<CompactionStart> {
  // the request waits for this compaction: `auto` runs it as parallel chunks (SPEC §5.10)
  const options: CompactionOptions = { agentWaiting: true, ...(agent ? { agent } : {}) };
  const started = await deps.db.transaction(async (tx): Promise<CompactionStart & { fresh?: boolean }> => {
    await withConversationLock(tx, conversation.id);
    const locked = (await getConversationById(tx, conversation.id)) ?? conversation;
    const active = await findActiveJob(tx, locked.id);
    if (active) return { jobId: active.id };
    const { policy } = await autoTriggerInputs(tx, locked);
    // the window is known to be exceeded (by compactd's count or the provider's): every other rule stands
    const state = triggerStateOf({ ...locked, activeTokens: Math.max(locked.activeTokens, locked.contextLimit) }, false);
    const decision = decideAutoCompaction(state, policy);
    if (!decision.compact) return { refused: `policy-${decision.reason.replaceAll('_', '-')}` };
    const deferred = await autoCompactionDeferral(tx, locked.tenantId, deps.config.quotas);
    if (deferred) return { refused: 'quota' };
    const inserted = await insertJob(
      tx,
      targetTokens === undefined
        ? { tenantId: locked.tenantId, conversationId: locked.id, trigger: 'auto', options }
        : {
            tenantId: locked.tenantId,
            conversationId: locked.id,
            trigger: 'api',
            options: { ...options, target: { tokens: targetTokens } },
          },
    );
    if (!inserted) return { refused: 'not-started' };
    return { jobId: inserted.id, fresh: true };
  });
  if ('jobId' in started && started.fresh) await deps.compactions.enqueue({ id: started.jobId, tenantId: conversation.tenantId });
  return 'jobId' in started ? { jobId: started.jobId } : started;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'noop']);

/**
 * Waits for a compaction to end, at most `waitMs`, on the job waiters (LISTEN/NOTIFY: no
 * polling), under the tenant's cap of open waiters (past it: a 429 AppError with retry-after).
 * True when it ended (however it ended).
 */
export async function waitForCompaction(
  deps: ApiDeps,
  tenantId: string,
  jobId: string,
  waitMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  if (!deps.jobWaiters) throw new Error('the gateway needs the job waiters (api/app.ts wires them)');
  const job = await deps.jobWaiters.wait({ tenantId, jobId, waitMs, signal });
  return job !== null && TERMINAL.has(job.status);
}
