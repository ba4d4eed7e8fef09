import { and, eq, like, notLike, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { chunkResults } from '../schema.js';

export type ChunkResultRow = typeof chunkResults.$inferSelect;
export type NewChunkResult = typeof chunkResults.$inferInsert;

export const chunkKey = (index: number): string => `chunk-${index}`;
export const resummaryKey = (index: number): string => `resummary-${index}`;

export async function getChunkResult(db: DbOrTx, jobId: string, key: string): Promise<ChunkResultRow | null> {
  const [row] = await db.select().from(chunkResults).where(and(eq(chunkResults.jobId, jobId), eq(chunkResults.chunkKey, key)));
  return row ?? null;
}

export async function listChunkResults(db: DbOrTx, jobId: string): Promise<ChunkResultRow[]> {
  return db.select().from(chunkResults).where(eq(chunkResults.jobId, jobId));
}

/** Memoizes a step; a concurrent duplicate keeps the first result (the one finalize will read). */
export async function saveChunkResult(db: DbOrTx, row: NewChunkResult): Promise<ChunkResultRow> {
  // latency arrives as a fractional ms reading; the column holds whole milliseconds
  await db.insert(chunkResults).values({ ...row, latencyMs: Math.round(row.latencyMs ?? 0) }).onConflictDoNothing();
  const saved = await getChunkResult(db, row.jobId, row.chunkKey);
  if (!saved) throw new Error(`chunk result ${row.jobId}/${row.chunkKey} vanished after insert`);
  return saved;
}

export async function countChunkResults(db: DbOrTx, jobId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(chunkResults)
    .where(and(eq(chunkResults.jobId, jobId), like(chunkResults.chunkKey, 'chunk-%'), notLike(chunkResults.chunkKey, '%.draft')));
  return row?.n ?? 0;
}
