import { and, eq } from 'drizzle-orm';

import type { DbOrTx } from '../client.js';
import { idempotencyKeys } from '../schema.js';

export type IdempotencyRow = typeof idempotencyKeys.$inferSelect;

/**
 * Claims the key inside the caller's transaction. A concurrent claim of the same key blocks
 * on the unique index until the first transaction ends, then sees its stored response —
 * which is how a storm of identical requests stores the work once.
 */
export async function claimIdempotencyKey(
  db: DbOrTx,
  params: { tenantId: string; key: string; route: string; requestHash: string },
): Promise<boolean> {
  const rows = await db.insert(idempotencyKeys).values(params).onConflictDoNothing().returning({ key: idempotencyKeys.key });
  return rows.length > 0;
}

export async function getIdempotencyRecord(db: DbOrTx, tenantId: string, key: string): Promise<IdempotencyRow | null> {
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.tenantId, tenantId), eq(idempotencyKeys.key, key)));
  return row ?? null;
}

export async function storeIdempotentResponse(
  db: DbOrTx,
  params: { tenantId: string; key: string; statusCode: number; response: unknown; headers: Record<string, string> },
): Promise<void> {
  await db
    .update(idempotencyKeys)
    .set({ statusCode: params.statusCode, response: params.response, headers: params.headers })
    .where(and(eq(idempotencyKeys.tenantId, params.tenantId), eq(idempotencyKeys.key, params.key)));
}
