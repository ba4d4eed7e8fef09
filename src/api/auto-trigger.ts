import { decideAutoCompaction } from '../compaction/trigger/index.js';
import { DEFAULT_TENANT_QUOTAS, type TenantQuotas } from '../config/env.js';
import type { Tx } from '../db/client.js';
import { type ConversationRow, setWarning, triggerStateOf } from '../db/repos/conversations.js';
import { insertJob } from '../db/repos/jobs.js';
import { type AutoTriggerInputs, autoTriggerInputs } from '../db/repos/tenants.js';
import { recordWebhookEvent } from '../db/repos/webhooks.js';
import type { CompactionOptions } from '../queue/job-options.js';
import { autoCompactionDeferral } from './compaction-quota.js';
import type { AppendEffects } from './deps.js';

/**
 * Runs inside the append's transaction (after the seqs are assigned): updates the warning
 * flag (recording a `context.warning` webhook when it turns on) and, past the threshold,
 * inserts an `auto` job; under `schedule: idle` above `idleRatio`, asks for the idle check
 * to be pushed back. The caller enqueues the job and `effects` after commit. An append made
 * with `autoCompact: false` (an import replaying past history) keeps the warning flag but
 * starts no compaction, now or at idle: compacting half an import would summarize history
 * the rest of the import has not yet delivered. A tenant over a compaction quota gets no job
 * either: the append succeeds and `effects.compactionDeferred` says why nothing started.
 */
export async function autoTriggerAfterAppend(
  tx: Tx,
  conversation: ConversationRow,
  effects: AppendEffects = { webhookDeliveryIds: [], idleCheckDelayMs: null },
  options: {
    autoCompact?: boolean;
    quotas?: TenantQuotas;
    jobOptions?: CompactionOptions;
    /** read by the caller in the append's own pipeline; read here when absent */
    triggerInputs?: AutoTriggerInputs;
  } = {},
): Promise<{ id: string; status: string } | null> {
  const autoCompact = options.autoCompact ?? true;
  const { policy, activeJob } = options.triggerInputs ?? (await autoTriggerInputs(tx, conversation));
  const decision = decideAutoCompaction(triggerStateOf(conversation, activeJob), policy);
  if (decision.warning !== conversation.warning) await setWarning(tx, conversation.id, decision.warning);
  const tokens = Math.max(conversation.activeTokens, conversation.reportedInputTokens ?? 0);
  if (decision.warning && !conversation.warning) {
    const deliveryId = await recordWebhookEvent(tx, {
      tenantId: conversation.tenantId,
      conversationId: conversation.id,
      conversationExternalId: conversation.externalId,
      type: 'context.warning',
      data: {
        activeTokens: conversation.activeTokens,
        tokens,
        contextLimit: conversation.contextLimit,
        ratio: tokens / conversation.contextLimit,
        warnRatio: policy.warnRatio,
      },
    });
    if (deliveryId) effects.webhookDeliveryIds.push(deliveryId);
  }
  // Only a conversation above idleRatio needs the check: appends only add tokens.
  if (autoCompact && policy.auto && policy.schedule === 'idle' && tokens >= policy.idleRatio * conversation.contextLimit) {
    effects.idleCheckDelayMs = policy.idleSeconds * 1000;
  }
  if (!decision.compact || !autoCompact) return null;
  const deferred = await autoCompactionDeferral(tx, conversation.tenantId, options.quotas ?? DEFAULT_TENANT_QUOTAS);
  if (deferred) {
    effects.compactionDeferred = deferred;
    return null;
  }
  const job = await insertJob(tx, {
    tenantId: conversation.tenantId,
    conversationId: conversation.id,
    trigger: 'auto',
    options: options.jobOptions ?? {},
  });
  return job ? { id: job.id, status: job.status } : null;
}
