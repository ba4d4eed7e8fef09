import { mergePolicy, type PolicyOverride } from '../config/policy.js';
import { decideAutoCompaction } from '../compaction/trigger.js';
import type { Tx } from '../db/client.js';
import { setWarning, type ConversationRow } from '../db/repos/conversations.js';
import { findActiveJob, insertJob } from '../db/repos/jobs.js';
import { getTenantPolicy } from '../db/repos/tenants.js';

/**
 * Runs inside the append's transaction (after the seqs are assigned): updates the warning
 * flag and, past the threshold, inserts an `auto` job. The caller enqueues it after commit.
 */
export async function autoTriggerAfterAppend(tx: Tx, conversation: ConversationRow): Promise<{ id: string; status: string } | null> {
  const policy = mergePolicy((await getTenantPolicy(tx, conversation.tenantId)) as PolicyOverride, conversation.policy as PolicyOverride);
  const active = await findActiveJob(tx, conversation.id);
  const decision = decideAutoCompaction(
    {
      activeTokens: conversation.activeTokens,
      reportedInputTokens: conversation.reportedInputTokens,
      contextLimit: conversation.contextLimit,
      activeMessages: conversation.messageCount,
      lastSeq: conversation.nextSeq - 1,
      lastCompactedSeq: conversation.lastCompactedSeq,
      autoPausedUntilSeq: conversation.autoPausedUntilSeq,
      hasActiveJob: active !== null,
    },
    policy,
  );
  if (decision.warning !== conversation.warning) await setWarning(tx, conversation.id, decision.warning);
  if (!decision.compact) return null;
  const job = await insertJob(tx, { tenantId: conversation.tenantId, conversationId: conversation.id, trigger: 'auto', options: {} });
  return job ? { id: job.id, status: job.status } : null;
}
