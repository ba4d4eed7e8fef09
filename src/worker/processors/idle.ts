import { decideAutoCompaction, type TriggerDecision } from '../../compaction/trigger/index.js';
import { getConversationById, triggerStateOf } from '../../db/repos/conversations.js';
import { findActiveJob, insertJob } from '../../db/repos/jobs.js';
import { conversationPolicy } from '../../db/repos/tenants.js';
import type { IdleCheckPayload } from '../../queue/catalog.js';
import { scheduleIdleCheck } from '../../queue/idle.js';
import { enqueueCompaction } from '../../queue/producer.js';
import type { WorkerDeps } from '../deps.js';

export type IdleDeps = Pick<WorkerDeps, 'db' | 'logger' | 'queues' | 'metrics'>;

export type IdleOutcome = 'compacted' | 'rescheduled' | 'missing' | 'not_idle_schedule' | Exclude<TriggerDecision['reason'], 'threshold'>;

/**
 * The delayed idle check of a `schedule: idle` conversation (SPEC §5.1). It runs once the
 * last append's delay has passed; if the conversation changed since (an append or a
 * compaction moved `updated_at`), it re-arms itself for the rest of the quiet period.
 * Otherwise it applies the auto trigger's rules with `idleRatio` as the threshold (minimum
 * messages, cooldown, the pause after a failed attempt, one active job) and starts an
 * `idle` compaction, planned like an auto one.
 */
export async function processIdleCheck(payload: IdleCheckPayload, deps: IdleDeps, nowMs = Date.now()): Promise<IdleOutcome> {
  const outcome = await checkIdle(payload, deps, nowMs);
  deps.metrics?.idleChecks.inc({ outcome });
  return outcome;
}

async function checkIdle(payload: IdleCheckPayload, deps: IdleDeps, nowMs: number): Promise<IdleOutcome> {
  const conversation = await getConversationById(deps.db, payload.conversationId);
  if (!conversation) return 'missing';
  const log = deps.logger.child({ conversationId: conversation.externalId, tenantId: conversation.tenantId });
  const policy = await conversationPolicy(deps.db, conversation);
  if (policy.schedule !== 'idle') return 'not_idle_schedule';

  const quietMs = nowMs - conversation.updatedAt.getTime();
  const idleMs = policy.idleSeconds * 1000;
  if (quietMs < idleMs) {
    await scheduleIdleCheck(deps.queues.compaction, conversation.id, idleMs - quietMs);
    return 'rescheduled';
  }

  const active = await findActiveJob(deps.db, conversation.id);
  const decision = decideAutoCompaction(
    triggerStateOf(conversation, active !== null),
    // the same rules as the eager trigger, with the idle threshold
    { ...policy, schedule: 'eager', triggerRatio: policy.idleRatio },
  );
  if (!decision.compact) {
    log.debug({ reason: decision.reason }, 'idle check: no compaction');
    return decision.reason === 'threshold' ? 'active_job' : decision.reason;
  }
  const job = await insertJob(deps.db, { tenantId: conversation.tenantId, conversationId: conversation.id, trigger: 'idle', options: {} });
  // Another job won the partial unique index between the check and the insert.
  if (!job) return 'active_job';
  await enqueueCompaction(deps.queues, job).catch((error: unknown) =>
    log.warn({ err: error, jobId: job.id }, 'enqueue failed; the reconciler will retry'),
  );
  log.info({ jobId: job.id, quietMs, activeTokens: conversation.activeTokens }, 'idle compaction enqueued');
  return 'compacted';
}
