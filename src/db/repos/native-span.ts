import { sql } from 'drizzle-orm';

import type { Block, ProviderCompaction, Role } from '../../compaction/types.js';
import type { DbOrTx } from '../client.js';

export interface NativeSpanRow {
  seq: number;
  role: Role;
  content: Block[];
  /** a previous native compaction's item, on the clip-archive that carries it */
  providerCompaction: ProviderCompaction | null;
}

/** The active messages a native compaction sends, with any provider item they carry, in seq order. */
export async function loadNativeSpan(db: DbOrTx, conversationId: string, seqs: readonly number[]): Promise<NativeSpanRow[]> {
  if (seqs.length === 0) return [];
  const rows = await db.execute<{ seq: string | number; role: Role; content: Block[]; provider_compaction: ProviderCompaction | null }>(sql`
    select seq, role, content, metadata -> 'providerCompaction' as provider_compaction
      from messages
     where conversation_id = ${conversationId} and seq = any(${`{${seqs.join(',')}}`}::bigint[])
     order by seq`);
  return rows.map((row) => ({ seq: Number(row.seq), role: row.role, content: row.content, providerCompaction: row.provider_compaction }));
}

/**
 * Whether the active history holds a provider compaction item its client sent (the gateway
 * stores it, pinned, as the conversation's clip): the provider accepts one such item per
 * request, so a compaction of compactd's cannot add its own.
 */
export async function holdsClientProviderItem(db: DbOrTx, conversationId: string): Promise<boolean> {
  const [row] = await db.execute<{ held: boolean }>(sql`
    select exists (select 1 from messages
                    where conversation_id = ${conversationId} and kind <> 'clip_archive' and metadata ? 'providerCompaction') as held`);
  return row?.held === true;
}
