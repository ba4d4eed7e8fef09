import type postgres from 'postgres';

/**
 * Postgres bytes per stored row, read from the bench database: table + indexes + TOAST
 * (pg_total_relation_size) divided by the rows. Dead rows left by archive moves count until
 * autovacuum reclaims them, as they would on a live platform between vacuums.
 */
export interface RowSizes {
  /** one message, active or archived */
  bytesPerMessage: number;
  /** one compaction: its job row, chunk rows and summary batch rows */
  bytesPerCompaction: number;
  /** one conversation row (policy, counters) */
  bytesPerConversation: number;
  rows: { messages: number; compactions: number; conversations: number };
}

const TABLES = ['messages', 'archived_messages', 'compaction_jobs', 'compaction_chunks', 'batches', 'conversations'] as const;

export async function measureRowSizes(sql: postgres.Sql): Promise<RowSizes> {
  const size: Record<string, number> = {};
  const count: Record<string, number> = {};
  for (const table of TABLES) {
    const [row] = await sql<Array<{ bytes: string; n: number }>>`
      select pg_total_relation_size(${table}::regclass)::text as bytes, (select count(*)::int from ${sql(table)}) as n`;
    size[table] = Number(row?.bytes ?? Number.NaN);
    count[table] = row?.n ?? 0;
  }
  const messages = (count['messages'] ?? 0) + (count['archived_messages'] ?? 0);
  const compactions = count['compaction_jobs'] ?? 0;
  const conversations = count['conversations'] ?? 0;
  return {
    bytesPerMessage: ((size['messages'] ?? 0) + (size['archived_messages'] ?? 0)) / messages,
    bytesPerCompaction: ((size['compaction_jobs'] ?? 0) + (size['compaction_chunks'] ?? 0) + (size['batches'] ?? 0)) / compactions,
    bytesPerConversation: (size['conversations'] ?? 0) / conversations,
    rows: { messages, compactions, conversations },
  };
}
