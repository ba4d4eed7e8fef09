import type { Db } from '../db/client.js';
import { indexArchiveForRecall, nextConversationWithRecallBacklog, type RecallIndexCursor } from '../db/repos/recall-index.js';
import type { Logger } from '../obs/logger.js';

/** Messages a pass indexes at most (and about 4 MB of their content). */
const PASS_MESSAGES = 200;
/**
 * Passes after one commit at most (~10,000 messages): a conversation archived before
 * migration 0008 is caught up over its next compactions, and searched from its content
 * (the newest part of the backlog) meanwhile.
 */
const MAX_PASSES = 50;

/**
 * Writes the recall pieces (SPEC §5.9) of the conversation's archived originals that have
 * none, after the compaction committed: the commit transaction never waits for them. A
 * failure is logged and left for the next compaction (and for search's direct read of the
 * backlog); it never fails the job, which is already completed.
 */
export async function indexRecallAfterCommit(db: Db, conversationId: string, log: Pick<Logger, 'warn' | 'debug'>): Promise<void> {
  const started = performance.now();
  let messages = 0;
  let pieces = 0;
  try {
    let after: RecallIndexCursor | null = null;
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      const done = await indexArchiveForRecall(db, conversationId, { limit: PASS_MESSAGES, after });
      messages += done.messages;
      pieces += done.pieces;
      if (!done.more) break;
      after = done.next;
    }
    log.debug({ messages, pieces, ms: Math.round(performance.now() - started) }, 'recall index written');
  } catch (error) {
    log.warn(
      { err: error, messages, pieces },
      'recall indexing failed; searches read the unindexed messages directly until a later compaction indexes them',
    );
  }
}

/** Passes one maintenance sweep runs at most (~1,000 messages): the backfill never holds the sweep long. */
const BACKFILL_PASSES_PER_SWEEP = 5;

/**
 * Indexes, a bounded step per maintenance sweep, the archives written before recall pieces
 * existed (migration 0008) or whose post-commit indexing failed: walks the conversations in
 * id order, one with a backlog at a time, and stops looking once a walk found none (until the
 * process restarts: new archives are indexed by their own finalize).
 */
export function createRecallBackfill(db: Db, log: Pick<Logger, 'warn' | 'info'>): { step(): Promise<void> } {
  let cursor: string | null = null;
  let current: string | null = null;
  // where the walk stands in `current`'s archive (reset with it)
  let after: RecallIndexCursor | null = null;
  let done = false;
  return {
    async step() {
      if (done) return;
      try {
        for (let pass = 0; pass < BACKFILL_PASSES_PER_SWEEP; pass++) {
          if (current === null) {
            current = await nextConversationWithRecallBacklog(db, cursor);
            if (current === null) {
              done = true;
              log.info('recall backfill: every archived message is indexed');
              return;
            }
          }
          const indexed = await indexArchiveForRecall(db, current, { limit: PASS_MESSAGES, after });
          after = indexed.next;
          if (!indexed.more) {
            cursor = current;
            current = null;
            after = null;
          }
        }
      } catch (error) {
        log.warn({ err: error, conversationId: current }, 'recall backfill step failed; the next sweep tries again');
      }
    },
  };
}
