-- Migration 0008 (hand-written): the extensions pg_trgm and btree_gin; the tables and indexes are
-- drizzle-kit's.
-- Recall by any fragment (SPEC §5.9). The full-text parser turns a path into one
-- token, so `services/session_registry.ex` never matched an archived `Read` of
-- `/home/u/lib/spotter/services/session_registry.ex`. Each archived original is cut into its
-- lines (capped, long ones in overlapping parts) and matched as substrings (ILIKE) through a
-- trigram index. The pieces are written after the compaction's commit, never inside it; a
-- marker row per indexed message tells the indexer and the search what is still to do.
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
-- btree_gin lets one GIN index hold (conversation_id, text): a fragment is looked up within its
-- conversation, never across the whole archive of every tenant.
CREATE EXTENSION IF NOT EXISTS btree_gin;--> statement-breakpoint
CREATE TABLE "archived_recall_pieces" (
	"archive_id" uuid NOT NULL,
	"conversation_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"role" text NOT NULL,
	"tool" text,
	"line" integer NOT NULL,
	"part" integer NOT NULL,
	"text" text NOT NULL,
	CONSTRAINT "archived_recall_pieces_archive_id_line_part_pk" PRIMARY KEY("archive_id","line","part")
);
--> statement-breakpoint
CREATE TABLE "archived_recall_indexed" (
	"archive_id" uuid PRIMARY KEY NOT NULL,
	"conversation_id" uuid NOT NULL,
	"pieces" integer NOT NULL,
	"indexed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "archived_recall_pieces" ADD CONSTRAINT "archived_recall_pieces_archive_id_archived_messages_archive_id_fk" FOREIGN KEY ("archive_id") REFERENCES "public"."archived_messages"("archive_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "archived_recall_indexed" ADD CONSTRAINT "archived_recall_indexed_archive_id_archived_messages_archive_id_fk" FOREIGN KEY ("archive_id") REFERENCES "public"."archived_messages"("archive_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "archived_recall_pieces_trgm" ON "archived_recall_pieces" USING gin ("conversation_id","text" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "archived_recall_indexed_conversation_idx" ON "archived_recall_indexed" USING btree ("conversation_id");
