import { eq } from 'drizzle-orm';

import type { DbOrTx } from '../client.js';
import { type ForgottenName, jobForgotten } from '../schema.js';

/** What a compaction's context no longer holds (SPEC §5.9), recorded in its commit transaction. */

export async function recordForgotten(db: DbOrTx, jobId: string, names: readonly ForgottenName[]): Promise<void> {
  await db
    .insert(jobForgotten)
    .values({ jobId, names: [...names] })
    .onConflictDoNothing();
}

/** The names recorded for a job, or null when its compaction recorded none (not completed, or written before). */
export async function loadForgotten(db: DbOrTx, jobId: string): Promise<ForgottenName[] | null> {
  const [row] = await db.select({ names: jobForgotten.names }).from(jobForgotten).where(eq(jobForgotten.jobId, jobId));
  return row ? row.names : null;
}
