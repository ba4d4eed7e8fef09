import { loadRealTranscript } from '../../harness/transcripts.js';
import { toolIdsOf } from '../../src/compaction/normalize.js';
import { countMessageTokens } from '../../src/compaction/tokens.js';
import { insertMessages } from '../../src/db/repos/messages.js';
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
  await insertMessages(db.db, conversation!.id, 1, rows);
  return conversation!.id;
}
