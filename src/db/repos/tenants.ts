import { eq, sql } from 'drizzle-orm';

import { mergePolicy, type Policy, type PolicyOverride } from '../../config/policy.js';
import type { DbOrTx } from '../client.js';
import { compiledStatement, preparedPerHandle } from '../prepared.js';
import { ACTIVE_STATUS_SQL, compactionJobs, conversations, tenants } from '../schema.js';

const policyOfTenant = preparedPerHandle((db) =>
  db
    .select({ policy: tenants.policy })
    .from(tenants)
    .where(eq(tenants.id, sql.placeholder('tenantId')))
    .prepare('tenant_policy'),
);

export async function getTenantPolicy(db: DbOrTx, tenantId: string): Promise<Record<string, unknown>> {
  const [row] = await policyOfTenant(db).execute({ tenantId });
  return row?.policy ?? {};
}

/** The policy in force for a conversation: defaults ← tenant ← conversation (SPEC §5.3). */
export async function conversationPolicy(
  db: DbOrTx,
  conversation: { tenantId: string; policy: Record<string, unknown> },
  request: PolicyOverride = {},
): Promise<Policy> {
  return mergePolicy(await getTenantPolicy(db, conversation.tenantId), conversation.policy, request);
}

export interface AutoTriggerInputs {
  policy: Policy;
  activeJob: boolean;
}

// read on every append: compiled once (see compiledStatement)
const autoTriggerStatement = compiledStatement<
  { policy: Record<string, unknown> | null; conversation_policy: Record<string, unknown> | null; active_job: boolean },
  { tenantId: string; conversationId: string }
>(sql`
  select (select policy from ${tenants} where id = ${sql.placeholder('tenantId')}) as policy,
         (select policy from ${conversations} where id = ${sql.placeholder('conversationId')}) as conversation_policy,
         exists (select 1 from ${compactionJobs}
                  where conversation_id = ${sql.placeholder('conversationId')} and status in ${ACTIVE_STATUS_SQL} and trigger <> 'consolidate') as active_job`);

/**
 * What the automatic trigger reads after an append, in one statement: the conversation's
 * policy (defaults ← tenant ← conversation, both as the database holds them when the
 * statement runs) and whether it has an active compaction (consolidations run beside one and
 * do not count; the predicate of the one-active index). Nothing it reads depends on a row the
 * caller holds, so it can join a pipeline sent before any of them is back.
 */
export async function autoTriggerInputs(db: DbOrTx, conversation: { id: string; tenantId: string }): Promise<AutoTriggerInputs> {
  const [row] = await autoTriggerStatement(db, { tenantId: conversation.tenantId, conversationId: conversation.id });
  return {
    policy: mergePolicy(row?.policy ?? {}, row?.conversation_policy ?? {}),
    activeJob: row?.active_job === true,
  };
}
