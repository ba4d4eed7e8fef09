import { sql } from 'drizzle-orm';

/** Archived rows that can be originals: the same filter everywhere keeps the definition single. */
export const isCandidate = (alias: string) => sql.raw(`${alias}.reason <> 'superseded_clip' and ${alias}.kind = 'message'`);
/**
 * Order of a seq's archived rows, earliest first. Each compaction commits in its own
 * transaction (its own `archived_at`) and archives a seq at most once, so `archived_at`
 * decides; the tie-breakers only make the order total, a rewrite's original (masked,
 * truncated) before a summarized version (false sorts first).
 */
export const archiveOrder = (alias: string) => sql.raw(`${alias}.archived_at, ${alias}.reason = 'summarized', ${alias}.archive_id`);
