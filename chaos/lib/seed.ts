import type { CorpusConversation } from './corpus.js';
import type { apiCalls } from './http.js';
import type { AppendLedger } from './invariants.js';

/** Creates `${prefix}-${i}` for each conversation (with `create` fields) and appends its messages, recording them in the ledger. */
export async function seedConversations(
  api: ReturnType<typeof apiCalls>,
  ledger: AppendLedger,
  prefix: string,
  conversations: readonly CorpusConversation[],
  policy: Record<string, unknown>,
  create: Record<string, unknown> = {},
): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, conversation] of conversations.entries()) {
    const id = `${prefix}-${i}`;
    await api.createConversation(id, { policy, ...create });
    const appended = await api.append(id, conversation.messages);
    ledger.record(
      id,
      appended.messages.map((m) => m.seq),
      conversation.messages,
    );
    ids.push(id);
  }
  return ids;
}
