-- Migration 0011 (hand-written): the UPDATE that keeps the vectors of the originals indexed so far,
-- and the DROP of 0006's trigger archived_messages_search_pieces and its function; the column and
-- index changes are drizzle-kit's.
-- The archive's full-text index is written after the compaction's commit, by the
-- recall indexer with the recall pieces, never inside it: the generated vector of
-- archived_messages cost the commit transaction about four times its archive insert (to_tsvector
-- over every archived row). The vector of an original's first piece now lives on its recall
-- marker; a search reads the newest not-yet-indexed originals directly meanwhile.
ALTER TABLE "archived_recall_indexed" ADD COLUMN "search_text" "tsvector";--> statement-breakpoint
-- the originals indexed so far keep their vectors
UPDATE "archived_recall_indexed" i SET "search_text" = a."search_text"
  FROM "archived_messages" a WHERE a."archive_id" = i."archive_id";--> statement-breakpoint
CREATE INDEX "archived_recall_indexed_search_gin" ON "archived_recall_indexed" USING gin ("conversation_id","search_text");--> statement-breakpoint
DROP INDEX "archived_search_gin";--> statement-breakpoint
ALTER TABLE "archived_messages" DROP COLUMN "search_text";--> statement-breakpoint
-- the pieces of a long message are written by the same indexer
DROP TRIGGER "archived_messages_search_pieces" ON "archived_messages";--> statement-breakpoint
DROP FUNCTION "compactd_insert_search_pieces"();
