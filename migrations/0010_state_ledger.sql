-- The state ledger (SPEC §5.6b): computed per chunk from its span, kept on the batch it
-- becomes, merged exactly by consolidation. NULL for chunks and batches written before it.
ALTER TABLE "compaction_chunks" ADD COLUMN "ledger" jsonb;--> statement-breakpoint
ALTER TABLE "batches" ADD COLUMN "ledger" jsonb;--> statement-breakpoint
-- What a compaction's context no longer holds: the span's names (paths, commands, error
-- lines, ids) that are now only in the archive, one row per completed compaction.
CREATE TABLE "job_forgotten" (
	"job_id" uuid PRIMARY KEY NOT NULL REFERENCES "compaction_jobs"("id") ON DELETE CASCADE,
	"names" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
