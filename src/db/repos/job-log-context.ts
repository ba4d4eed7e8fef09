import { eq } from 'drizzle-orm';

import type { DbOrTx } from '../client.js';
import { compactionJobs, conversations } from '../schema.js';

/** The ids every log line of a job carries: job, conversation (the client's id) and tenant. */
export interface JobLogContext {
  jobId: string;
  conversationId: string;
  tenantId: string;
}

export async function getJobLogContext(db: DbOrTx, jobId: string): Promise<JobLogContext | null> {
  const [row] = await db
    .select({ jobId: compactionJobs.id, conversationId: conversations.externalId, tenantId: compactionJobs.tenantId })
    .from(compactionJobs)
    .innerJoin(conversations, eq(conversations.id, compactionJobs.conversationId))
    .where(eq(compactionJobs.id, jobId));
  return row ?? null;
}
