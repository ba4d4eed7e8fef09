-- The state ledger (SPEC §5.6b): computed per chunk from its span, kept on the batch it
-- becomes, merged exactly by consolidation. NULL for chunks and batches written before it.
ALTER TABLE "compaction_chunks" ADD COLUMN "ledger" jsonb;--> statement-breakpoint
ALTER TABLE "batches" ADD COLUMN "ledger" jsonb;--> statement-breakpoint
-- What a compaction's context no longer holds: the span's names (paths, commands, error
-- lines, ids) that are now only in the archive, one row per completed compaction.
CREATE TABLE "job_forgotten" (
	"job_id" uuid PRIMARY KEY NOT NULL,
	"names" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
ALTER TABLE "job_forgotten" ADD CONSTRAINT "job_forgotten_job_id_compaction_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."compaction_jobs"("id") ON DELETE cascade ON UPDATE no action;
