import { loadRealTranscript } from '../../harness/transcripts.js';
import { toolIdsOf } from '../../src/compaction/normalize.js';
import { countMessageTokens } from '../../src/compaction/tokens.js';
import { recordAppend } from '../../src/db/repos/conversations.js';
import { insertReservedMessages } from '../../src/db/repos/messages.js';
import { conversations, tenants } from '../../src/db/schema.js';
import { countTokens } from '../../src/lib/count-tokens.js';
import type { TestDatabase } from './db.js';

/**
 * A conversation holding a whole real session as active rows, as an append stores them (its
 * meta turns, a /compact wrapper and isMeta lines included), under a tenant of its own.
 * Returns the conversation's id.
 */
export async function storeRealSession(db: TestDatabase, name: string, transcript: string): Promise<string> {
  const [tenant] = await db.db.insert(tenants).values({ name }).returning();
  const [conversation] = await db.db
    .insert(conversations)
    .values({ tenantId: tenant!.id, externalId: name, contextLimit: 200_000 })
    .returning();
  const source = loadRealTranscript(transcript, { compactBoundary: 'include' }).conversations[0]!.messages;
  const rows = source.map((m) => {
    const ids = toolIdsOf(m.content);
    return {
      role: m.role,
      content: m.content,
      tokens: countMessageTokens(m, countTokens),
      toolUseIds: ids.opens,
      toolResultIds: ids.answers,
      metadata: m.metadata,
    };
  });
  // as an append stores them: the counters reserve the seqs, the insert takes them
  const addedTokens = rows.reduce((sum, row) => sum + row.tokens, 0);
  await recordAppend(db.db, { id: conversation!.id, addedMessages: rows.length, addedTokens, reportedInputTokens: undefined });
  await insertReservedMessages(db.db, conversation!.id, rows);
  return conversation!.id;
}
