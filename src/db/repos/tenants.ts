import { eq, sql } from 'drizzle-orm';
import { mergePolicy, type Policy, type PolicyOverride } from '../../config/policy.js';
import type { DbOrTx } from '../client.js';
import { preparedPerHandle } from '../prepared.js';
import { tenants } from '../schema.js';

const policyOfTenant = preparedPerHandle((db) => db.select({ policy: tenants.policy }).from(tenants).where(eq(tenants.id, sql.placeholder('tenantId'))).prepare('tenant_policy'));

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
  return mergePolicy((await getTenantPolicy(db, conversation.tenantId)) as PolicyOverride, conversation.policy as PolicyOverride, request);
}
