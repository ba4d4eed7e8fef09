import { eq, sql } from 'drizzle-orm';

import type { DbOrTx } from '../client.js';
import { conversations } from '../schema.js';

/**
 * A consolidation changes only the clip-archive: the conversation's active totals and
 * warning move, its compaction count, watermark and auto-trigger state do not.
 */
export async function recordConsolidation(
  db: DbOrTx,
  params: { conversationId: string; tokens: number; messages: number; warning: boolean },
): Promise<void> {
  await db
    .update(conversations)
    .set({
      activeTokens: params.tokens,
      messageCount: params.messages,
      warning: params.warning,
      version: sql`${conversations.version} + 1`,
      updatedAt: sql`now()`,
    })
    .where(eq(conversations.id, params.conversationId));
}
