import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { tenants } from '../schema.js';

export async function getTenantPolicy(db: DbOrTx, tenantId: string): Promise<Record<string, unknown>> {
  const [row] = await db.select({ policy: tenants.policy }).from(tenants).where(eq(tenants.id, tenantId));
  return row?.policy ?? {};
}
